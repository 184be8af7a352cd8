package web

// flavourLines is the small table of Middle-earth voice. The flavour rule:
// it lives in empty states, loading lines and error pages, never in a
// button, a label or a menu.
var flavourLines = map[string]string{
	"404":        "Not all those who wander are lost. This page, however, is.",
	"403":        "You shall not pass. Not this way, at least.",
	"error":      "Even the wise cannot see all ends. Something broke; it has been written down.",
	"offline":    "The beacons are unlit. The road to the server is closed for now.",
	"home-empty": "The road goes ever on and on. Where shall it lead today?",
	"loading":    "Consulting the palantír…",
	"signin":     "Speak, friend, and enter.",
	"register":   "Every journey starts with a single step.",
}

// flavourLine returns the line for key, or "" for an unknown key, so a
// missing line costs a blank rather than a broken page.
func flavourLine(key string) string { return flavourLines[key] }
