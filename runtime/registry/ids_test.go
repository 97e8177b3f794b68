package registry

import "testing"

func TestDefaultID(t *testing.T) {
	tests := []struct{ name, want string }{
		{"CreateFn", "create_fn"},
		{"CreateWithLabelsMatching", "create_with_labels_matching"},
		{"InstantFailureWithOnlyAMessage", "instant_failure_with_only_a_message"},
		{"EventualSuccessWithAFewMessages", "eventual_success_with_a_few_messages"},
		{"HTTPServer", "http_server"},
		{"GetURL", "get_url"},
		{"ServeHTTP", "serve_http"},
		{"URLFor", "url_for"},
		{"ID", "id"},
		{"Handler2", "handler2"},
		{"Handler2Fn", "handler2_fn"},
		{"V1Pods", "v1_pods"},
		{"CreateFn_1", "create_fn_1"},
		{"Create_Fn", "create_fn"},
		{"create_fn", "create_fn"},
		{"createFn", "create_fn"},
		{"sayYes", "say_yes"},
		{"Create", "create"},
		{"X", "x"},
		{"ÜberFn", "über_fn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultID(tt.name); got != tt.want {
				t.Errorf("DefaultID(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
