package llm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestToolCallAssembler(t *testing.T) {
	tests := []struct {
		name   string
		deltas []ToolCallDelta
		want   []ToolCall
	}{
		{
			name: "one tool twice, keyed by index",
			deltas: []ToolCallDelta{
				{Index: 0, ID: "a", Name: "search", Arguments: ""},
				{Index: 0, Arguments: `{"q":`},
				{Index: 1, ID: "b", Name: "search"},
				{Index: 0, Arguments: `"elves"}`},
				{Index: 1, Arguments: `{"q":"dwarves"}`},
			},
			want: []ToolCall{
				{ID: "a", Name: "search", Arguments: `{"q":"elves"}`},
				{ID: "b", Name: "search", Arguments: `{"q":"dwarves"}`},
			},
		},
		{
			name: "returned in index order, not arrival order",
			deltas: []ToolCallDelta{
				{Index: 2, ID: "c", Name: "third", Arguments: "{}"},
				{Index: 0, ID: "a", Name: "first", Arguments: "{}"},
				{Index: 1, ID: "b", Name: "second", Arguments: "{}"},
			},
			want: []ToolCall{{ID: "a", Name: "first", Arguments: "{}"}, {ID: "b", Name: "second", Arguments: "{}"}, {ID: "c", Name: "third", Arguments: "{}"}},
		},
		{
			name: "id and name repeated in every fragment are not doubled",
			deltas: []ToolCallDelta{
				{Index: 0, ID: "a", Name: "now", Arguments: "{"},
				{Index: 0, ID: "a", Name: "now", Arguments: "}"},
			},
			want: []ToolCall{{ID: "a", Name: "now", Arguments: "{}"}},
		},
		{
			name: "no id, no arguments",
			deltas: []ToolCallDelta{
				{Index: 0, Name: "now"},
				{Index: 3, Name: "later"},
			},
			want: []ToolCall{{ID: "call_0", Name: "now", Arguments: "{}"}, {ID: "call_3", Name: "later", Arguments: "{}"}},
		},
		{
			name: "no index: whole calls each start a new one",
			deltas: []ToolCallDelta{
				{Index: -1, ID: "a", Name: "search", Arguments: `{"q":"x"}`},
				{Index: -1, ID: "b", Name: "search", Arguments: `{"q":"y"}`},
			},
			want: []ToolCall{{ID: "a", Name: "search", Arguments: `{"q":"x"}`}, {ID: "b", Name: "search", Arguments: `{"q":"y"}`}},
		},
		{
			name: "no index: bare arguments continue the last call",
			deltas: []ToolCallDelta{
				{Index: -1, ID: "a", Name: "search", Arguments: `{"q":`},
				{Index: -1, Arguments: `"x"}`},
				{Index: -1, ID: "a", Arguments: ``},
			},
			want: []ToolCall{{ID: "a", Name: "search", Arguments: `{"q":"x"}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a ToolCallAssembler
			for _, d := range tt.deltas {
				if err := a.Add(d); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.Calls(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if a.Len() != len(tt.want) {
				t.Fatalf("Len = %d", a.Len())
			}
			a.Reset()
			if a.Calls() != nil || a.Len() != 0 {
				t.Fatal("Reset kept calls")
			}
		})
	}
}

func TestToolCallAssemblerLimits(t *testing.T) {
	var a ToolCallAssembler
	var err error
	for i := 0; i <= maxToolCalls && err == nil; i++ {
		err = a.Add(ToolCallDelta{Index: i * 1000, Name: "x"})
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindBadResponse {
		t.Fatalf("too many calls: %v", err)
	}

	a.Reset()
	big := strings.Repeat("x", 1<<20)
	err = nil
	for i := 0; i < 10 && err == nil; i++ {
		err = a.Add(ToolCallDelta{Index: 0, Arguments: big})
	}
	if !errors.As(err, &e) || e.Kind != KindBadResponse {
		t.Fatalf("huge arguments: %v", err)
	}
}
