package splitbrain

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendStrings appends names as a JSON array of strings.
func appendStrings(dst []byte, names []string) []byte {
	dst = append(dst, '[')
	for i, name := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, name)
	}
	return append(dst, ']')
}

// compact checks raw JSON and removes its insignificant whitespace (a reply is one line).
func compact(raw []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// objectType returns the string "type" field of the JSON object raw, or "".
func objectType(raw []byte) string {
	t, _ := objectTypeOK(raw)
	return t
}

// objectTypeOK finds the top-level string field "type" of the JSON object raw (which must
// be valid JSON) without decoding the rest.
func objectTypeOK(raw []byte) (string, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return "", false
		}
		end := skipString(raw, i)
		if end < 0 {
			return "", false
		}
		key := raw[i:end]
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return "", false
		}
		i = skipSpace(raw, i+1)
		if isKey(key, "type") {
			if i >= len(raw) || raw[i] != '"' {
				return "", false
			}
			vend := skipString(raw, i)
			if vend < 0 {
				return "", false
			}
			return unquote(raw[i:vend])
		}
		i = skipValue(raw, i)
		if i < 0 {
			return "", false
		}
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != ',' {
			return "", false
		}
		i++
	}
}

// isKey reports whether the quoted JSON string quoted is name.
func isKey(quoted []byte, name string) bool {
	if len(quoted) == len(name)+2 && string(quoted[1:len(quoted)-1]) == name {
		return true
	}
	if bytes.IndexByte(quoted, '\\') < 0 {
		return false
	}
	s, ok := unquote(quoted)
	return ok && s == name
}

// unquote decodes the quoted JSON string quoted.
func unquote(quoted []byte) (string, bool) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the JSON string starting at raw[i] ('"'), or -1.
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the JSON value starting at raw[i], or -1.
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				i = skipString(raw, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(raw) {
			switch raw[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}
