package web

import "strings"

// describeAgent turns a User-Agent header into "Firefox on Linux": enough
// for a person to recognise their own browsers in the session list. The
// order of the checks matters: Edge and Opera claim to be Chrome, and
// Chrome claims to be Safari.
func describeAgent(ua string) string {
	if ua == "" {
		return "Unknown browser"
	}
	browser := "A browser"
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"},
		{"HeadlessChrome/", "Headless Chrome"}, {"Chromium/", "Chromium"}, {"Chrome/", "Chrome"},
		{"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, o := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			system = o.name
			break
		}
	}
	if system == "" {
		return browser
	}
	return browser + " on " + system
}
