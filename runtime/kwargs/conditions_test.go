package kwargs

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

func TestSetCondition(t *testing.T) {
	const earlier = "2026-01-02T03:04:05Z"
	ready := func(status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: "Deployed", Message: "m"}
	}
	tests := []struct {
		name        string
		body        string
		sets        []metav1.Condition
		wantChanged []bool
		want        string // status.conditions in the patch, lastTransitionTime as T unless earlier; "" for none
	}{
		{name: "a first condition",
			body: `{"metadata": {"generation": 3}}`,
			sets: []metav1.Condition{ready("True")}, wantChanged: []bool{true},
			want: `[{"lastTransitionTime":"T","message":"m","observedGeneration":3,"reason":"Deployed","status":"True","type":"Ready"}]`},
		{name: "unchanged: nothing written",
			body: `{"metadata": {"generation": 3}, "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Deployed", "message": "m", "observedGeneration": 3, "lastTransitionTime": "` + earlier + `"}]}}`,
			sets: []metav1.Condition{ready("True")}, wantChanged: []bool{false}},
		{name: "a new generation: observedGeneration moves, the transition time stays",
			body: `{"metadata": {"generation": 4}, "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Deployed", "message": "m", "observedGeneration": 3, "lastTransitionTime": "` + earlier + `"}]}}`,
			sets: []metav1.Condition{ready("True")}, wantChanged: []bool{true},
			want: `[{"lastTransitionTime":"` + earlier + `","message":"m","observedGeneration":4,"reason":"Deployed","status":"True","type":"Ready"}]`},
		{name: "a status change: a new transition time; other types kept",
			body: `{"metadata": {"generation": 4}, "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Deployed", "message": "m", "observedGeneration": 4, "lastTransitionTime": "` + earlier + `"}, {"type": "Degraded", "status": "False", "reason": "R", "message": "", "lastTransitionTime": "` + earlier + `"}]}}`,
			sets: []metav1.Condition{ready("False")}, wantChanged: []bool{true},
			want: `[{"lastTransitionTime":"T","message":"m","observedGeneration":4,"reason":"Deployed","status":"False","type":"Ready"},{"lastTransitionTime":"` + earlier + `","message":"","reason":"R","status":"False","type":"Degraded"}]`},
		{name: "two in one cycle: the second sees the first",
			body: `{"metadata": {"generation": 1}}`,
			sets: []metav1.Condition{ready("False"), {Type: "Progressing", Status: "True", Reason: "Scaling"}}, wantChanged: []bool{true, true},
			want: `[{"lastTransitionTime":"T","message":"m","observedGeneration":1,"reason":"Deployed","status":"False","type":"Ready"},{"lastTransitionTime":"T","message":"","observedGeneration":1,"reason":"Scaling","status":"True","type":"Progressing"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b body.Body
			if err := json.Unmarshal([]byte(tt.body), &b); err != nil {
				t.Fatal(err)
			}
			kw := &Base{Body: b, Meta: b.Meta(), Patch: patches.New()}
			for i, c := range tt.sets {
				changed, err := kw.SetCondition(c)
				if err != nil {
					t.Fatal(err)
				}
				if changed != tt.wantChanged[i] {
					t.Errorf("SetCondition #%d: changed = %v, want %v", i, changed, tt.wantChanged[i])
				}
			}
			got := ""
			if status, ok := kw.Patch["status"].(map[string]any); ok {
				data, err := json.Marshal(status["conditions"])
				if err != nil {
					t.Fatal(err)
				}
				got = string(data)
			}
			if tt.want != "" {
				got = timeless(got, earlier)
			}
			if got != tt.want {
				t.Errorf("status.conditions in the patch:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// timeless replaces the transition times other than keep by T.
func timeless(conds, keep string) string {
	var list []map[string]any
	if err := json.Unmarshal([]byte(conds), &list); err != nil {
		return conds
	}
	for _, c := range list {
		if c["lastTransitionTime"] != keep {
			c["lastTransitionTime"] = "T"
		}
	}
	data, _ := json.Marshal(list)
	return string(data)
}

func TestConditionsMalformed(t *testing.T) {
	kw := &Base{Body: body.Body{"status": map[string]any{"conditions": "ready"}}, Patch: patches.New()}
	if _, err := kw.SetCondition(metav1.Condition{Type: "Ready", Status: "True", Reason: "R"}); err == nil || !strings.Contains(err.Error(), "status.conditions is not a list of conditions") {
		t.Errorf("err = %v", err)
	}
	if !kw.Patch.IsEmpty() {
		t.Errorf("the patch: %v", kw.Patch)
	}
}
