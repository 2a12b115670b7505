package crushtext

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
)

// header declares two devices and three types for the error cases below;
// it is 5 lines long.
const header = `device 0 osd.0 class ssd
device 1 osd.1 class hdd
type 0 osd
type 1 host
type 2 root
`

// hostH0 is a valid bucket (lines 6-10 after header).
const hostH0 = `host h0 {
	id -2
	alg straw2
	item osd.0
}
`

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		msg       string
	}{
		{"unknown tunable", "tunable foo 1\n", 1, 9, "tunable foo not recognized"},
		{"tunable out of range", "tunable chooseleaf_vary_r 256\n", 1, 27, "out of range"},
		{"bad number", "device x osd.0\n", 1, 8, `expected a device id, found "x"`},
		{"negative device id", "device -1 osd.0\n", 1, 8, "out of range"},
		{"bad character", "device 0 osd~0\n", 1, 13, "unexpected character '~'"},
		{"duplicate device name", "device 0 a\ndevice 1 a\n", 2, 10, "item a defined twice"},
		{"duplicate device id", "device 0 a\ndevice 0 b\n", 2, 8, "device id 0 defined twice"},
		{"duplicate type", "type 0 osd\ntype 1 osd\n", 2, 8, "type osd defined twice"},
		{"reserved type name", "type 1 rule\n", 1, 8, "type name rule is reserved"},
		{"unknown bucket type", header + "rack r {\n}\n", 6, 1, "bucket type 'rack' is not defined"},
		{"unknown item", header + "host h {\n\tid -1\n\talg straw2\n\titem osd.9\n}\n", 9, 7, "item 'osd.9' in bucket 'h' is not defined"},
		{"item used before its definition", header + "root r {\n\talg straw2\n\titem h0\n}\n" + hostH0, 8, 7, "item 'h0' in bucket 'r' is not defined"},
		{"duplicate bucket id", header + hostH0 + "host h1 {\n\tid -2\n}\n", 12, 5, "id -2 is already used by bucket 'h0'"},
		{"class id clashes with bucket id", header + hostH0 + "root r {\n\tid -3\n\tid -2 class ssd\n}\n", 13, 5, "id -2 is already used"},
		{"positive bucket id", header + "host h {\n\tid 3\n}\n", 7, 5, "out of range"},
		{"unknown alg", header + "host h {\n\talg straw3\n}\n", 7, 6, "unknown bucket alg 'straw3'"},
		{"no alg", header + "host h {\n\tid -1\n}\n", 8, 1, "bucket 'h' has no alg line"},
		{"unknown hash", header + "host h {\n\talg straw2\n\thash 1\n}\n", 8, 7, "unknown hash '1'"},
		{"device weight limit", header + "host h {\n\talg straw2\n\titem osd.0 weight 101\n}\n", 8, 20, "device weight limited to 100"},
		{"bad weight", header + "host h {\n\talg straw2\n\titem osd.0 weight 1x\n}\n", 8, 20, `expected a weight, found "1x"`},
		{"uniform weights differ", header + "host h {\n\talg uniform\n\titem osd.0 weight 1\n\titem osd.1 weight 2\n}\n", 9, 7,
			"uniform bucket 'h' has weight 2.000 but previous item(s) have weight 1.000"},
		{"pos beyond size", header + "host h {\n\talg tree\n\titem osd.0 pos 1\n}\n", 8, 17, "has pos 1 >= size 1"},
		{"pos occupied", header + "host h {\n\talg tree\n\titem osd.0 pos 0\n\titem osd.1 pos 0\n}\n", 9, 17, "explicit pos 0, which is occupied"},
		{"missing brace", header + "host h {\n\talg straw2\n", 8, 1, "expected id, alg, hash, item or '}', found end of input"},
		{"device after bucket", header + hostH0 + "device 2 osd.2\n", 11, 1, "device lines must come before buckets"},
		{"bucket after rule", header + hostH0 + "rule r {\n\tid 0\n\ttype replicated\n\tstep emit\n}\n" + "host h1 {\n}\n", 16, 1, "buckets must be defined before rules"},
		{"rule id twice", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep emit\n}\nrule b {\n\tid 0\n", 17, 5, "rule 0 already exists"},
		{"rule id too big", header + hostH0 + "rule a {\n\tid 256\n", 12, 5, "out of range"},
		{"rule without steps", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n}\n", 14, 1, "rule 'a' has no steps"},
		{"unknown step", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep jump\n}\n", 14, 7, `unknown step "jump"`},
		{"unknown take item", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep take h9\n}\n", 14, 12, "in rule 'a' item 'h9' not defined"},
		{"take unknown class", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep take h0 class nvme\n}\n", 14, 21, "no device has class nvme"},
		{"take device with class", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep take osd.0 class ssd\n}\n", 14, 12, "has no class information"},
		{"choose unknown type", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep choose firstn 0 type rack\n}\n", 14, 28, "in rule 'a' type 'rack' not defined"},
		{"choose bad mode", header + hostH0 + "rule a {\n\tid 0\n\ttype replicated\n\tstep choose all 0 type host\n}\n", 14, 14, "expected firstn or indep"},
		{"choose_args unknown bucket", header + hostH0 + "choose_args 0 {\n  { bucket_id -9 }\n}\n", 12, 15, "bucket -9 does not exist"},
		{"weight set size mismatch", header + hostH0 + "choose_args 0 {\n  {\n    bucket_id -2\n    weight_set [\n      [ 1.0 2.0 ]\n    ]\n  }\n}\n", 15, 7,
			"bucket -2 needs exactly 1 weights but got 2"},
		{"ids size mismatch", header + hostH0 + "choose_args 0 {\n  { bucket_id -2 ids [ ] }\n}\n", 12, 22, "bucket -2 needs exactly 1 ids but got 0"},
		{"choose_args twice", header + hostH0 + "choose_args 1 {\n}\nchoose_args 1 {\n}\n", 13, 13, "choose_args 1 duplicated"},
		{"rule after choose_args", header + hostH0 + "choose_args 1 {\n}\nrule a {\n", 13, 1, "rules must come before choose_args"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.src))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got %v\nwant line %d, column %d: ...%s...", err, tc.line, tc.col, tc.msg)
			}
		})
	}
}

// TestBuilderErrorsAreSyntaxErrors checks that an error only crush.New can
// find (a uniform bucket whose ssd shadow would have unequal weights) still
// comes back as a *SyntaxError, at the first rule, wrapping
// crush.ErrInvalidMap.
func TestBuilderErrorsAreSyntaxErrors(t *testing.T) {
	src := `device 0 osd.0 class ssd
device 1 osd.1 class hdd
device 2 osd.2 class ssd
device 3 osd.3 class ssd
type 0 osd
type 1 host
type 2 root
host h0 {
	alg straw2
	item osd.0
	item osd.1
}
host h1 {
	alg straw2
	item osd.2
	item osd.3
}
root r {
	alg uniform
	item h0
	item h1
}
rule a {
	id 0
	type replicated
	step take r class ssd
	step emit
}
`
	_, err := Compile([]byte(src))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 23 || se.Column != 1 || !errors.Is(err, crush.ErrInvalidMap) {
		t.Fatalf("got %v, want a SyntaxError at line 23, column 1 wrapping crush.ErrInvalidMap", err)
	}
	if _, err := Parse([]byte(src)); err != nil {
		t.Errorf("Parse should accept what only crush.New rejects: %v", err)
	}
}
