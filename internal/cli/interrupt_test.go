package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestScreenLines(t *testing.T) {
	got := Screen("a\n\rbar 50%\r       \rmsg\nline\n")
	want := []string{"a", "msg", "line"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("screen = %q, want %q", got, want)
	}
}

// TestConsoleMutesBar checks the console alone: a bar is cleared by the
// message, later redraws are dropped and lines pass.
func TestConsoleMutesBar(t *testing.T) {
	var out bytes.Buffer
	c := &console{w: &out}
	c.Write([]byte("first line\n"))
	c.Write([]byte("\rbar 10% |#     |"))
	c.Write([]byte("\rbar 50% |###   |"))
	c.interrupted("stopping")
	c.Write([]byte("\rbar 60% |####  |"))
	c.Write([]byte("epoch line\n"))
	got := strings.Join(Screen(out.String()), "|")
	if want := "first line|stopping|epoch line"; got != want {
		t.Errorf("screen %q, want %q (output %q)", got, want, out.String())
	}
	// On a terminal without a bar, the message ends the line of the
	// echoed ^C.
	out.Reset()
	c = &console{w: &out, terminal: true}
	c.Write([]byte("line\n"))
	out.WriteString("^C")
	c.interrupted("stopping")
	if got := strings.Join(Screen(out.String()), "|"); got != "line|^C|stopping" {
		t.Errorf("screen %q after ^C", got)
	}
}
