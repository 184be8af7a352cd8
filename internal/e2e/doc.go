// Package e2e drives a real LLeMbas through headless Chromium: the first
// account, the theme switch, every page at a phone and a desktop width, our
// own confirmation dialog, the README's screenshot, and chats against a
// scripted model (llmtest): replies streaming in, Stop, leaving and coming
// back, Regenerate, editing, the queue, hostile output and the composer's
// keys.
//
// It holds tests only; the app imports nothing from here. Each test starts
// its own server on loopback with a fresh data directory. The test binary
// starts one Chromium and gives each test a new tab in a browser context of
// its own, so no cookie leaks from one test to the next (cookies ignore the
// port, and every server listens on 127.0.0.1).
//
// The tests never skip: without Chromium they fail and say how to install it.
package e2e
