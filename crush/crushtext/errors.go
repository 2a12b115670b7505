package crushtext

import "fmt"

// SyntaxError is the only error type Parse and Compile return. Line and
// Column are 1-based; columns count bytes (a tab is one column).
type SyntaxError struct {
	Line, Column int
	Msg          string
	// Err is the underlying cause when there is one, e.g. crush.New's error
	// (which wraps crush.ErrInvalidMap) for a map the grammar accepted but
	// the builder rejected.
	Err error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Unwrap returns the underlying cause, if any.
func (e *SyntaxError) Unwrap() error { return e.Err }

// errorAt builds a SyntaxError at token t.
func errorAt(t token, format string, args ...any) *SyntaxError {
	return &SyntaxError{Line: t.line, Column: t.col, Msg: fmt.Sprintf(format, args...)}
}
