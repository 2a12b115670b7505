package auth

import (
	"fmt"
	"strings"
)

// The cap text's tokens: words, quoted strings ("..." or '...', with
// backslash escaping the quote and the backslash), '=', and grant
// separators (',' or ';').

type tokKind uint8

const (
	tokWord tokKind = iota
	tokQuoted
	tokEquals
	tokSep
)

type token struct {
	kind tokKind
	text string // the word or the unquoted string
	pos  int    // byte offset, for errors
}

// isWordByte reports whether c may appear in an unquoted word.
func isWordByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ';', '=', '"', '\'':
		return false
	}
	return c > ' ' && c != 0x7f
}

// lexCaps splits text into tokens.
func lexCaps(text string) ([]token, error) {
	var toks []token
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ',' || c == ';':
			toks = append(toks, token{tokSep, string(c), i})
			i++
		case c == '=':
			toks = append(toks, token{tokEquals, "=", i})
			i++
		case c == '"' || c == '\'':
			s, n, err := lexQuoted(text[i:])
			if err != nil {
				return nil, fmt.Errorf("offset %d: %w", i, err)
			}
			toks = append(toks, token{tokQuoted, s, i})
			i += n
		case isWordByte(c):
			j := i
			for j < len(text) && isWordByte(text[j]) {
				j++
			}
			toks = append(toks, token{tokWord, text[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("offset %d: unexpected character %q", i, c)
		}
	}
	return toks, nil
}

// lexQuoted reads a quoted string at the start of s and returns its
// value and the bytes consumed.
func lexQuoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(s) && (s[i+1] == q || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i++
		case c < ' ' || c == 0x7f:
			return "", 0, fmt.Errorf("control character %q in quoted string", c)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated %c-quoted string", q)
}

// quoteCapValue renders v as a word if it lexes back as one, else as a
// double-quoted string.
func quoteCapValue(v string) string {
	plain := v != ""
	for i := 0; i < len(v) && plain; i++ {
		plain = isWordByte(v[i])
	}
	if plain {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}
