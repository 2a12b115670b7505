package clusterconn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// RunMon sends one command and prints its reply: the JSON document for
// --format json, the text for people otherwise. A refused command is an
// error carrying the monitor's status and code.
func RunMon(ctx context.Context, f *Flags, out *cmdutil.Output, cmd wire.Command) error {
	c, err := f.MonClient()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	r, err := c.Run(ctx, cmd)
	if err != nil {
		return err
	}
	if err := r.Err(); err != nil {
		return Named(cmd.Prefix, err)
	}
	return PrintReply(out, r)
}

// PrintReply prints a monitor's or daemon's reply: its JSON document
// for --format json ({"status": ...} when it has none), its text (or
// status) for people otherwise.
func PrintReply(out *cmdutil.Output, r wire.Reply) error {
	if out.Format == cmdutil.FormatJSON {
		var v any = map[string]string{"status": r.Status}
		if len(r.Data) > 0 {
			if err := json.Unmarshal(r.Data, &v); err != nil {
				return fmt.Errorf("cli: the monitor's reply is not JSON: %w", err)
			}
		}
		return out.Print(v, nil)
	}
	return out.Print(nil, func(w io.Writer) error {
		text := r.Text
		if text == "" {
			text = r.Status
		}
		if text != "" && text[len(text)-1] != '\n' {
			text += "\n"
		}
		_, err := io.WriteString(w, text)
		return err
	})
}

// MonCommand returns a cobra command that sends prefix with the
// positional arguments named by argNames (a trailing "..." name takes
// the rest, space-joined) and the given string flags as arguments.
func MonCommand(f *Flags, out *cmdutil.Output, use, short, prefix string, argNames []string, flags ...string) *cobra.Command {
	values := make([]string, len(flags))
	minArgs, maxArgs := len(argNames), len(argNames)
	variadic := len(argNames) > 0 && len(argNames[len(argNames)-1]) > 3 && argNames[len(argNames)-1][len(argNames[len(argNames)-1])-3:] == "..."
	optional := 0
	for _, a := range argNames {
		if len(a) > 0 && a[0] == '?' {
			optional++
		}
	}
	minArgs -= optional
	args := cobra.RangeArgs(minArgs, maxArgs)
	if variadic {
		args = cobra.MinimumNArgs(minArgs)
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, pos []string) error {
			wc := wire.NewCommand(prefix)
			for i, v := range pos {
				name := argNames[min(i, len(argNames)-1)]
				name = trimArgName(name)
				if prev, ok := wc.Args[name]; ok && variadic {
					v = prev + " " + v
				}
				wc.Args[name] = v
			}
			for i, fl := range flags {
				if cmd.Flags().Changed(fl) {
					wc.Args[flagArg(fl)] = values[i]
				}
			}
			return RunMon(cmd.Context(), f, out, wc)
		},
	}
	for i, fl := range flags {
		c.Flags().StringVar(&values[i], fl, "", "")
	}
	return c
}

func trimArgName(n string) string {
	if len(n) > 0 && n[0] == '?' {
		n = n[1:]
	}
	if len(n) > 3 && n[len(n)-3:] == "..." {
		n = n[:len(n)-3]
	}
	return n
}

// flagArg maps a flag name (min-size) to its argument name (min_size).
func flagArg(fl string) string {
	b := []byte(fl)
	for i := range b {
		if b[i] == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}
