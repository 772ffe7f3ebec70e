package plugins

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config holds capture settings under ArchiveBox's key names (plugins spec
// §2.3): defaults < ArchiveBox.conf < environment < what the command line
// sets.
type Config struct {
	values map[string]string
}

// Defaults are the values folio uses when neither ArchiveBox.conf nor the
// environment sets a key.
var Defaults = map[string]string{
	"TIMEOUT":                 "60",
	"USER_AGENT":              "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 folio",
	"RESOLUTION":              "1440,2000",
	"CHECK_SSL_VALIDITY":      "True",
	"CHROME_BINARY":           "",
	"CHROME_CDP_URL":          "",
	"CHROME_PAGELOAD_TIMEOUT": "",
	"CHROME_DELAY_AFTER_LOAD": "0",
	"CHROME_SETTLE_TIMEOUT":   "5",
	"STATICFILE_MAX_SIZE":     "1073741824",
	"SNAPSHOT_USER":           "system",
	"EXPORT_ALLOW_CRAWLERS":   "False", // folio's: robots.txt of an export lets crawlers index archived copies
}

// pluginTimeouts are the plugins' own default timeouts in seconds
// (plugins spec §2.3); others fall back to TIMEOUT.
var pluginTimeouts = map[string]int{
	"title": 30, "headers": 30, "favicon": 30, "readability": 30, "htmltotext": 30, "hashes": 30,
	"screenshot": 60, "pdf": 60, "dom": 60, "singlefile": 60,
}

// LoadConfig reads ArchiveBox.conf at path (absent is fine) and then the
// environment. ArchiveBox.conf is ArchiveBox's INI file: [SECTION]
// headers, KEY = value lines, # and ; comments; sections do not matter.
func LoadConfig(path string, environ []string) (Config, error) {
	c := Config{values: map[string]string{}}
	for k, v := range Defaults {
		c.values[k] = v
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return c, fmt.Errorf("read %s: %w", path, err)
	default:
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return c, fmt.Errorf("%s: line %d: want KEY = value, got %q", path, n, line)
			}
			c.values[strings.ToUpper(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
		if err := sc.Err(); err != nil {
			return c, fmt.Errorf("read %s: %w", path, err)
		}
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == strings.ToUpper(k) && known(k) {
			c.values[k] = v
		}
	}
	return c, nil
}

// known reports whether an environment variable is a capture setting: a
// key folio has a default for, or one of the per-plugin families.
func known(k string) bool {
	if _, ok := Defaults[k]; ok {
		return true
	}
	for _, suffix := range []string{"_ENABLED", "_TIMEOUT", "_RESOLUTION", "_USER_AGENT", "_BINARY", "_ARGS", "_ARGS_EXTRA"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return strings.HasPrefix(k, "SAVE_") || strings.HasPrefix(k, "USE_")
}

// Set overrides a key (a command-line flag).
func (c Config) Set(key, value string) { c.values[key] = value }

// Get returns a key's value, "" when unset.
func (c Config) Get(key string) string { return c.values[key] }

// Bool reads a key as ArchiveBox's hooks do: true/1/yes/on, any case.
func (c Config) Bool(key string, def bool) bool {
	v, ok := c.values[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

// Enabled reports <NAME>_ENABLED, with its aliases SAVE_<NAME> and
// USE_<NAME>; true unless set otherwise.
func (c Config) Enabled(plugin string) bool {
	up := strings.ToUpper(plugin)
	for _, k := range []string{up + "_ENABLED", "SAVE_" + up, "USE_" + up} {
		if _, ok := c.values[k]; ok {
			return c.Bool(k, true)
		}
	}
	return true
}

// Timeout is <NAME>_TIMEOUT, else the plugin's default, else TIMEOUT.
func (c Config) Timeout(plugin string) time.Duration {
	if d, ok := c.seconds(strings.ToUpper(plugin) + "_TIMEOUT"); ok {
		return d
	}
	if s, ok := pluginTimeouts[plugin]; ok {
		if global, set := c.seconds("TIMEOUT"); set && global < time.Duration(s)*time.Second {
			return global // a shorter global TIMEOUT bounds every plugin
		}
		return time.Duration(s) * time.Second
	}
	return c.GlobalTimeout()
}

// GlobalTimeout is TIMEOUT.
func (c Config) GlobalTimeout() time.Duration {
	if d, ok := c.seconds("TIMEOUT"); ok {
		return d
	}
	return 60 * time.Second
}

// PageLoadTimeout is CHROME_PAGELOAD_TIMEOUT, else TIMEOUT.
func (c Config) PageLoadTimeout() time.Duration {
	if d, ok := c.seconds("CHROME_PAGELOAD_TIMEOUT"); ok {
		return d
	}
	return c.GlobalTimeout()
}

func (c Config) seconds(key string) (time.Duration, bool) {
	v := strings.TrimSpace(c.values[key])
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// Resolution parses <PLUGIN>_RESOLUTION, else RESOLUTION ("1440,2000").
func (c Config) Resolution(plugin string) (w, h int, err error) {
	key := strings.ToUpper(plugin) + "_RESOLUTION"
	v := c.values[key]
	if strings.TrimSpace(v) == "" {
		key, v = "RESOLUTION", c.values["RESOLUTION"]
	}
	a, b, ok := strings.Cut(strings.ReplaceAll(v, "x", ","), ",")
	w, err1 := strconv.Atoi(strings.TrimSpace(a))
	h, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || w < 1 || h < 1 || w > 16384 || h > 16384 {
		return 0, 0, fmt.Errorf("%s=%q: want WIDTH,HEIGHT in pixels, e.g. 1440,2000", key, v)
	}
	return w, h, nil
}

// Validate checks the settings a run depends on, naming the bad one.
func (c Config) Validate() error {
	if _, _, err := c.Resolution("screenshot"); err != nil {
		return err
	}
	if _, err := c.SettleTimeout(); err != nil {
		return err
	}
	if _, err := c.ChromeArgsExtra(); err != nil {
		return err
	}
	for _, k := range []string{"TIMEOUT", "CHROME_PAGELOAD_TIMEOUT"} {
		if v := strings.TrimSpace(c.values[k]); v != "" {
			if _, ok := c.seconds(k); !ok {
				return fmt.Errorf("%s=%q: want a positive number of seconds", k, v)
			}
		}
	}
	return nil
}

// ChromeArgsExtra is CHROME_ARGS_EXTRA: flags added to those folio
// launches Chromium with, as ArchiveBox writes them (a JSON list,
// ["--flag", "--key=value"]) or separated by spaces. Each must start
// with "--".
func (c Config) ChromeArgsExtra() ([]string, error) {
	v := strings.TrimSpace(c.values["CHROME_ARGS_EXTRA"])
	if v == "" {
		return nil, nil
	}
	var args []string
	if strings.HasPrefix(v, "[") {
		if err := json.Unmarshal([]byte(v), &args); err != nil {
			return nil, fmt.Errorf("CHROME_ARGS_EXTRA=%q: not a JSON list of flags: %v", v, err)
		}
	} else {
		args = strings.Fields(v)
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "--") || len(a) < 3 {
			return nil, fmt.Errorf("CHROME_ARGS_EXTRA: %q is not a Chromium flag (want --name or --name=value)", a)
		}
	}
	return args, nil
}

// Environ is the configuration as environment variables for an external
// hook: every key, booleans as True/False (plugins spec §3.2).
func (c Config) Environ() []string {
	out := make([]string, 0, len(c.values))
	for k, v := range c.values {
		switch strings.ToLower(v) {
		case "true", "yes", "on":
			v = "True"
		case "false", "no", "off":
			v = "False"
		}
		out = append(out, k+"="+v)
	}
	return out
}
