//go:build linux || freebsd || netbsd || openbsd || dragonfly

package main

// maxrssUnit: getrusage's maxrss counts kilobytes on these systems.
const maxrssUnit = 1024
