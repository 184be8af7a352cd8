package llm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Servers disagree about types more often than about names: a count comes
// as 12, 12.0 or "12"; a price as "0.000001" or 1e-6; a text field as a
// string, null, or an array of content parts. One field of an unexpected
// type must not throw away a whole chunk or a whole model list, so the
// fields that have been seen to vary are read through these types, which
// never fail: what they cannot read becomes the zero value.

// flexInt reads a number, a numeric string, or anything else as 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	*n = 0
	if len(b) == 0 {
		return nil
	}
	if b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			return nil
		}
		b = []byte(strings.TrimSpace(s))
	}
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*n = flexInt(v)
		return nil
	}
	if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= -1e15 && f <= 1e15 {
		*n = flexInt(f)
	}
	return nil
}

// flexFloat reads a number or a numeric string.
type flexFloat float64

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	*f = 0
	if len(b) > 0 && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			return nil
		}
		b = []byte(strings.TrimSpace(s))
	}
	if v, err := strconv.ParseFloat(string(b), 64); err == nil {
		*f = flexFloat(v)
	}
	return nil
}

// flexString reads a string, or the text of a number, or nothing.
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	*s = ""
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var v string
		if json.Unmarshal(b, &v) == nil {
			*s = flexString(v)
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		*s = flexString(b)
	}
	return nil
}

// flexStrings reads a list of strings, skipping anything else; a single
// string becomes a list of one.
type flexStrings []string

func (l *flexStrings) UnmarshalJSON(b []byte) error {
	*l = nil
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s flexString
		_ = s.UnmarshalJSON(b)
		*l = flexStrings{string(s)}
	case '[':
		var raw []json.RawMessage
		if json.Unmarshal(b, &raw) != nil {
			return nil
		}
		for _, r := range raw {
			var s flexString
			_ = s.UnmarshalJSON(r)
			if s != "" {
				*l = append(*l, string(s))
			}
		}
	}
	return nil
}

func (l flexStrings) has(names ...string) bool {
	for _, s := range l {
		for _, n := range names {
			if strings.EqualFold(s, n) {
				return true
			}
		}
	}
	return false
}

// text is a field meant to hold text. Most servers send a string; Mistral
// sends content as an array of parts, some of them "thinking"; a few send
// null or an object. Thinking collects the parts marked as reasoning.
type text struct {
	Text     string
	Thinking string
}

func (t *text) UnmarshalJSON(b []byte) error {
	*t = text{}
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		if !bytes.ContainsRune(b, '\\') && utf8.Valid(b) {
			// The common case: no escapes, so the bytes between the
			// quotes are the text (json has already checked them).
			t.Text = string(b[1 : len(b)-1])
			return nil
		}
		var s string
		if json.Unmarshal(b, &s) == nil {
			t.Text = s
		}
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(b, &parts) != nil {
			return nil
		}
		for _, p := range parts {
			var sub text
			_ = sub.UnmarshalJSON(p)
			t.Text += sub.Text
			t.Thinking += sub.Thinking
		}
	case '{':
		var part struct {
			Type     string          `json:"type"`
			Text     json.RawMessage `json:"text"`
			Content  json.RawMessage `json:"content"`
			Thinking json.RawMessage `json:"thinking"`
		}
		if json.Unmarshal(b, &part) != nil {
			return nil
		}
		var sub text
		switch {
		case part.Type == "thinking" || part.Type == "reasoning":
			for _, raw := range []json.RawMessage{part.Thinking, part.Text, part.Content} {
				if len(raw) > 0 {
					_ = sub.UnmarshalJSON(raw)
					t.Thinking = sub.Text + sub.Thinking
					break
				}
			}
		case part.Type == "" || part.Type == "text" || part.Type == "output_text":
			for _, raw := range []json.RawMessage{part.Text, part.Content} {
				if len(raw) > 0 {
					_ = sub.UnmarshalJSON(raw)
					t.Text, t.Thinking = sub.Text, sub.Thinking
					break
				}
			}
		}
	}
	return nil
}

// rawText reads a value that should be a string of JSON (tool-call
// arguments) but is sometimes the JSON itself.
type rawText string

func (r *rawText) UnmarshalJSON(b []byte) error {
	*r = ""
	if len(b) == 0 || b[0] == 'n' {
		return nil
	}
	if b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			*r = rawText(s)
		}
		return nil
	}
	*r = rawText(b)
	return nil
}
