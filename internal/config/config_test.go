package config

import (
	"log/slog"
	"strings"
	"testing"
)

func env(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.DataDir != "data" || c.LogLevel != slog.LevelInfo || c.Dev || c.AllowSignup != nil {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestEnvironmentThenFlags(t *testing.T) {
	c, err := Load(env(map[string]string{
		"LEMBAS_ADDR": "0.0.0.0:9000", "LEMBAS_DATA_DIR": "/srv/lembas", "LEMBAS_ALLOW_SIGNUP": "false",
		"LEMBAS_LOG_LEVEL": "debug", "LEMBAS_DEV": "1", "LEMBAS_SECRET_KEY": " k ",
		"LEMBAS_OPENAI_BASE_URL": "http://localhost:11434/v1",
	}), []string{"-addr", "127.0.0.1:9001"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9001" {
		t.Errorf("flag did not win: %s", c.Addr)
	}
	if c.DataDir != "/srv/lembas" || c.AllowSignup == nil || *c.AllowSignup || c.LogLevel != slog.LevelDebug || !c.Dev || c.SecretKey != "k" || c.OpenAIBaseURL == "" {
		t.Errorf("environment not read: %+v", c)
	}
}

// A bad value stops startup with one sentence naming the variable.
func TestBadValuesNameTheVariable(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		name string
	}{
		{map[string]string{"LEMBAS_ALLOW_SIGNUP": "perhaps"}, nil, "LEMBAS_ALLOW_SIGNUP"},
		{map[string]string{"LEMBAS_LOG_LEVEL": "loud"}, nil, "LEMBAS_LOG_LEVEL"},
		{map[string]string{"LEMBAS_DEV": "sometimes"}, nil, "LEMBAS_DEV"},
		{map[string]string{"LEMBAS_ADDR": "8080"}, nil, "LEMBAS_ADDR"},
		{nil, []string{"-log-level", "loud"}, "-log-level"},
		{nil, []string{"-nonsense"}, "command line"},
		{nil, []string{"extra"}, "command line"},
	}
	for _, c := range cases {
		_, err := Load(env(c.env), c.args)
		if err == nil || !strings.Contains(err.Error(), c.name) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%v %v: err = %v, want one line naming %s", c.env, c.args, err, c.name)
		}
	}
}
