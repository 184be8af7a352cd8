package llm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Limits on one reply's tool calls, so a hostile server cannot make us
// hold without bound.
const (
	maxToolCalls     = 128
	maxArgumentBytes = 8 << 20
)

// ToolCallAssembler rejoins tool-call fragments into whole calls. It keys
// them by index, never by name: a model may call one tool twice in a turn,
// and two calls of one name would then run together (spec: "Tool-call
// arguments arrive in fragments"). The zero value is ready to use; it is
// not safe for concurrent use.
type ToolCallAssembler struct {
	calls map[int]*ToolCall
	last  int // the index of the call the last fragment went to
}

// Add takes one fragment. A fragment without an index (servers that send
// each call whole in one fragment) starts a new call when it names one,
// and otherwise continues the last.
func (a *ToolCallAssembler) Add(d ToolCallDelta) error {
	if a.calls == nil {
		a.calls = make(map[int]*ToolCall)
		a.last = -1
	}
	idx := d.Index
	if idx < 0 {
		switch {
		case a.last >= 0 && d.ID != "" && a.calls[a.last].ID == d.ID:
			idx = a.last
		case d.ID != "" || d.Name != "" || a.last < 0:
			idx = a.nextIndex()
		default:
			idx = a.last
		}
	}
	c, ok := a.calls[idx]
	if !ok {
		if len(a.calls) >= maxToolCalls {
			return &Error{Kind: KindBadResponse, Message: fmt.Sprintf("The model made more than %d tool calls in one reply; stopped reading them.", maxToolCalls)}
		}
		c = &ToolCall{}
		a.calls[idx] = c
	}
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Name
	}
	if len(c.Arguments)+len(d.Arguments) > maxArgumentBytes {
		return &Error{Kind: KindBadResponse, Message: fmt.Sprintf("A tool call's arguments passed %d MiB; stopped reading them.", maxArgumentBytes>>20)}
	}
	c.Arguments += d.Arguments
	a.last = idx
	return nil
}

func (a *ToolCallAssembler) nextIndex() int {
	next := 0
	for i := range a.calls {
		if i >= next {
			next = i + 1
		}
	}
	return next
}

// Len is the number of calls begun.
func (a *ToolCallAssembler) Len() int { return len(a.calls) }

// Calls returns the calls in index order. A call the server gave no id
// gets "call_N" (N its index), since a tool result must name the call it
// answers; empty arguments become "{}".
func (a *ToolCallAssembler) Calls() []ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]ToolCall, 0, len(idx))
	for _, i := range idx {
		c := *a.calls[i]
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(i)
		}
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		out = append(out, c)
	}
	return out
}

// Reset forgets every call, for the next round.
func (a *ToolCallAssembler) Reset() {
	a.calls = nil
	a.last = -1
}
