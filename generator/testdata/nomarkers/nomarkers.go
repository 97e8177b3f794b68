// Package nomarkers has no markers and gets no generated file, even though
// it mentions //kopf:on.create in prose.
package nomarkers

// Hello is not a handler.
func Hello() string { return "hello" }
