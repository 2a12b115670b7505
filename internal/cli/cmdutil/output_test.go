package cmdutil

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

type sample struct {
	Name string `json:"name"`
	Size int    `json:"size"`
}

func TestOutputPrint(t *testing.T) {
	v := sample{Name: "a<b>", Size: 3}
	plain := func(w io.Writer) error {
		_, err := io.WriteString(w, "plain text\n")
		return err
	}
	tests := []struct {
		format string
		plain  func(io.Writer) error
		want   string
	}{
		{FormatJSON, plain, "{\n  \"name\": \"a<b>\",\n  \"size\": 3\n}\n"},
		{FormatPlain, plain, "plain text\n"},
		{"", plain, "plain text\n"},
		{FormatPlain, nil, "{a<b> 3}\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		o := &Output{Format: tt.format, W: &buf}
		if err := o.Print(v, tt.plain); err != nil {
			t.Fatalf("format %q: %v", tt.format, err)
		}
		if got := buf.String(); got != tt.want {
			t.Errorf("format %q: got %q, want %q", tt.format, got, tt.want)
		}
	}
}

func TestOutputPrintErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := (&Output{Format: "xml", W: &buf}).Print(1, nil); err == nil {
		t.Error("unknown format: no error")
	}
	if err := (&Output{Format: FormatJSON, W: &buf}).Print(func() {}, nil); err == nil {
		t.Error("unencodable value: no error")
	}
	errPlain := errors.New("plain failed")
	err := (&Output{Format: FormatPlain, W: &buf}).Print(1, func(io.Writer) error { return errPlain })
	if !errors.Is(err, errPlain) {
		t.Errorf("err = %v, want %v", err, errPlain)
	}
	if buf.Len() != 0 {
		t.Errorf("failed prints wrote %q", buf.String())
	}
}

func TestFormatFlagRejectsUnknown(t *testing.T) {
	var f FormatFlag
	for _, ok := range []string{FormatPlain, FormatJSON} {
		if err := f.Set(ok); err != nil || string(f) != ok {
			t.Errorf("Set(%q) = %v, value %q", ok, err, f)
		}
	}
	err := f.Set("yaml")
	if err == nil || !strings.Contains(err.Error(), "plain, json") {
		t.Errorf("Set(yaml) = %v", err)
	}
}
