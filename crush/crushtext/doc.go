// Package crushtext reads and writes Ceph's CRUSH map text format: what
// "crushtool -d" prints and "crushtool -c" compiles.
//
// The package owns the grammar (lexer.go, parse*.go), the compiler's
// semantics as Ceph 16 (Pacific) implements them (legacy default tunables,
// float32 weight conversion, item positions, device-class shadow ids,
// choose_args validation; numbers.go and parse*.go) and the exact byte
// layout of the decompiled text (decompile*.go). It knows nothing of how a
// map is validated, built or evaluated: that is package crush, which Compile
// calls through crush.New, and the mapper is never used here. It must not
// know about pools, OSD states or any binary encoding.
//
// Parse turns text into a crush.Spec, Compile builds the crush.Map, and
// Decompile prints a Map back. For every map that crushtool prints,
// Decompile(Compile(text)) reproduces the text byte for byte.
//
// All errors from Parse and Compile are *SyntaxError values carrying the
// line and column of the offending token.
//
// Every function is pure: no package state, no I/O, safe for concurrent use.
//
// Start reading at Parse (parse.go) and Decompile (decompile.go).
package crushtext
