package crushtext

import "fmt"

// tokenKind tells words from the four bracket characters.
type tokenKind uint8

const (
	tokWord tokenKind = iota
	tokLBrace
	tokRBrace
	tokLBracket
	tokRBracket
	tokEOF
)

// token is one lexeme. Ceph's grammar has no string literals: keywords,
// names and numbers are all words, told apart by where they appear.
type token struct {
	kind      tokenKind
	text      string
	line, col int
}

func (t token) String() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return fmt.Sprintf("%q", t.text)
}

// isWordByte reports whether c may appear in a word: Ceph's name characters
// [-_.0-9a-zA-Z] plus '+', which real numbers may contain ("1e+3"). Names
// are checked separately (validName).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '+'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// bracketKind returns the kind of a bracket character, or tokWord for any
// other byte.
func bracketKind(c byte) tokenKind {
	switch c {
	case '{':
		return tokLBrace
	case '}':
		return tokRBrace
	case '[':
		return tokLBracket
	case ']':
		return tokRBracket
	}
	return tokWord
}

// lex splits src into tokens, dropping whitespace and '#' comments (which
// run to the end of the line, as in Ceph). The last token is tokEOF.
func lex(src []byte) ([]token, error) {
	// Most words are short; a rough guess saves regrowing on big maps.
	toks := make([]token, 0, len(src)/5+1)
	line, lineStart := 1, 0
	for i := 0; i < len(src); {
		c := src[i]
		col := i - lineStart + 1
		switch {
		case c == '\n':
			line, lineStart = line+1, i+1
			i++
		case isSpace(c):
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case bracketKind(c) != tokWord:
			toks = append(toks, token{kind: bracketKind(c), text: string(c), line: line, col: col})
			i++
		case isWordByte(c):
			start := i
			for i < len(src) && isWordByte(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tokWord, text: string(src[start:i]), line: line, col: col})
		default:
			return nil, &SyntaxError{Line: line, Column: col,
				Msg: fmt.Sprintf("unexpected character %q (names may hold only letters, digits, '-', '_' and '.')", c)}
		}
	}
	toks = append(toks, token{kind: tokEOF, line: line, col: len(src) - lineStart + 1})
	return toks, nil
}

// validName reports whether s is a valid CRUSH name ([-_.0-9a-zA-Z]+, as
// Ceph's is_valid_crush_name).
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '+' {
			return false
		}
	}
	return s != ""
}
