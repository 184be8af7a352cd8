package db

import (
	"time"

	"github.com/google/uuid"
)

// NewID returns a UUIDv7 as text: unique, and ordered by creation time, so
// ids sort the way rows were made.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// Millis is the storage form of a time: unix milliseconds, UTC.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// Time turns stored milliseconds back into a time.Time in UTC.
func Time(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
