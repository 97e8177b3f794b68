package kopf_test

// The settings of docs/filters.md ("Server-side selectors"), compiled here.

import "github.com/kopf-go/kopf"

// explicitSelectors narrows the watch of KopfExamples on the server.
func explicitSelectors() kopf.Option {
	return kopf.WithSettings(func(s *kopf.Settings) {
		s.Watching.Selectors = map[string]kopf.WatchSelector{
			"kopfexamples.kopf.dev": {Labels: "tier in (web,db)", Fields: "metadata.namespace!=kube-system"},
		}
	})
}

// noInferredSelectors watches every object and filters here, as Kopf.
func noInferredSelectors() kopf.Option {
	return kopf.WithSettings(func(s *kopf.Settings) { s.Watching.InferSelectors = false })
}

var _, _ = explicitSelectors, noInferredSelectors
