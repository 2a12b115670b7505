package radoscmd

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/rados"
)

// valueReport is the JSON form of an attribute's or omap entry's value:
// as text (invalid UTF-8 replaced) and exactly, in base64.
type valueReport struct {
	Pool      string `json:"pool"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Attr      string `json:"attr,omitempty"`
	Key       string `json:"key,omitempty"`
	Bytes     int    `json:"bytes"`
	Value     string `json:"value"`
	Base64    []byte `json:"value_base64"`
}

func radosSetXattrCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "setxattr OBJECT ATTR [VALUE]",
		Short: "Set an extended attribute of OBJECT (VALUE from standard input if not given)",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, attr := args[0], args[1]
			v, err := valueArg(cmd, args, 2)
			if err != nil {
				return err
			}
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				if err := ioc.SetXattr(ctx, name, attr, v); err != nil {
					return radosFailure("setxattr "+e.path(name), err)
				}
				r := e.report(name)
				r.Attr = attr
				return e.printSilent(r)
			})
		},
	}
}

func radosGetXattrCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "getxattr OBJECT ATTR",
		Short: "Print an extended attribute of OBJECT, as its raw bytes",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, attr := args[0], args[1]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				v, err := ioc.GetXattr(ctx, name, attr)
				if err != nil {
					return radosFailure(fmt.Sprintf("getxattr %s %s", e.path(name), attr), err)
				}
				r := valueReport{Pool: e.pool, Namespace: e.ns, Name: name, Attr: attr, Bytes: len(v), Value: string(v), Base64: v}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := w.Write(v)
					return err
				})
			})
		},
	}
}

func radosListXattrCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "listxattr OBJECT",
		Short: "List the extended attributes of OBJECT, one name per line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				attrs, err := ioc.ListXattrs(ctx, name)
				if err != nil {
					return radosFailure("listxattr "+e.path(name), err)
				}
				names := make([]string, 0, len(attrs))
				for k := range attrs {
					names = append(names, k)
				}
				slices.Sort(names)
				return e.out.Print(names, linesOf(names))
			})
		},
	}
}

func radosRmXattrCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "rmxattr OBJECT ATTR",
		Short: "Remove an extended attribute of OBJECT",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, attr := args[0], args[1]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				if err := ioc.RmXattr(ctx, name, attr); err != nil {
					return radosFailure(fmt.Sprintf("rmxattr %s %s", e.path(name), attr), err)
				}
				r := e.report(name)
				r.Attr = attr
				return e.printSilent(r)
			})
		},
	}
}

func radosSetOmapValCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "setomapval OBJECT KEY [VALUE]",
		Short: "Set an omap entry of OBJECT (VALUE from standard input if not given)",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, key := args[0], args[1]
			v, err := valueArg(cmd, args, 2)
			if err != nil {
				return err
			}
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				if err := ioc.SetOmap(ctx, name, map[string][]byte{key: v}); err != nil {
					return radosFailure("setomapval "+e.path(name), err)
				}
				r := e.report(name)
				r.Key = key
				return e.printSilent(r)
			})
		},
	}
}

func radosGetOmapValCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "getomapval OBJECT KEY [FILE|-]",
		Short: "Print an omap entry's value as a hex dump, or write it to FILE",
		Long: `Print the value of omap entry KEY of OBJECT as Ceph's rados does,
"value (N bytes) :" and a hex dump; with FILE, write the raw value there
("-": standard output).`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, key := args[0], args[1]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) (err error) {
				m, err := ioc.GetOmapValuesByKeys(ctx, name, key)
				if err != nil {
					return radosFailure("getomapval "+e.path(name), err)
				}
				v, ok := m[key]
				if !ok {
					return fmt.Errorf("no such key: %s/%s", e.path(name), key)
				}
				if len(args) == 3 {
					w, closeOut, err := openOut(e.out, args[2])
					if err != nil {
						return err
					}
					if _, err := w.Write(v); err != nil {
						closeOut()
						return err
					}
					return closeOut()
				}
				r := valueReport{Pool: e.pool, Namespace: e.ns, Name: name, Key: key, Bytes: len(v), Value: string(v), Base64: v}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "value (%d bytes) :\n%s\n", len(v), hexDump(v))
					return err
				})
			})
		},
	}
}

func radosRmOmapKeyCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "rmomapkey OBJECT KEY",
		Short: "Remove an omap entry of OBJECT",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, key := args[0], args[1]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				if err := ioc.RmOmapKeys(ctx, name, key); err != nil {
					return radosFailure("rmomapkey "+e.path(name), err)
				}
				r := e.report(name)
				r.Key = key
				return e.printSilent(r)
			})
		},
	}
}

func radosListOmapKeysCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "listomapkeys OBJECT",
		Short: "List the omap keys of OBJECT, one per line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				keys := []string{}
				after := ""
				for {
					r := rados.NewReadOp()
					st := r.GetOmapKeys(after, "", omapBatch)
					if err := ioc.OperateRead(ctx, name, r); err != nil {
						return radosFailure("listomapkeys "+e.path(name), err)
					}
					keys = append(keys, st.Keys...)
					if !st.More || len(st.Keys) == 0 {
						break
					}
					after = st.Keys[len(st.Keys)-1]
				}
				return e.out.Print(keys, linesOf(keys))
			})
		},
	}
}

func radosListOmapValsCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "listomapvals OBJECT",
		Short: "List the omap entries of OBJECT: each key, then its value as a hex dump",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				vals := []valueReport{}
				err := forOmap(ctx, ioc, name, func(batch []rados.KeyValue) error {
					for _, kv := range batch {
						vals = append(vals, valueReport{Pool: e.pool, Namespace: e.ns, Name: name, Key: kv.Key,
							Bytes: len(kv.Value), Value: string(kv.Value), Base64: kv.Value})
					}
					return nil
				})
				if err != nil {
					return radosFailure("listomapvals "+e.path(name), err)
				}
				return e.out.Print(vals, func(w io.Writer) error {
					for _, v := range vals {
						if _, err := fmt.Fprintf(w, "%s\nvalue (%d bytes) :\n%s\n", lineSafe(v.Key), v.Bytes, hexDump(v.Base64)); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
}

// hexDump formats b as Ceph's bufferlist::hexdump (and hexdump -C) do:
// 16 bytes a line with their offset and text, then the length.
func hexDump(b []byte) string {
	var s strings.Builder
	s.WriteString(hex.Dump(b))
	fmt.Fprintf(&s, "%08x", len(b))
	return s.String()
}

// linesOf prints each string on a line of its own, quoted if it needs
// it (lineSafe).
func linesOf(items []string) func(io.Writer) error {
	return func(w io.Writer) error {
		lw := newLineWriter(w)
		for _, s := range items {
			if err := lw.line(lineSafe(s)); err != nil {
				return err
			}
		}
		return lw.flush()
	}
}
