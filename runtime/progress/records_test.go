package progress

import (
	"reflect"
	"testing"
	"time"
)

func ptrTime(s string) *time.Time {
	t, err := ParseTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}

func ptrStr(s string) *string { return &s }

func TestRecordMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"zero", Record{}, `{"retries":0,"success":false,"failure":false}`},
		{"wire-format eventual_success", Record{
			Started: ptrTime("2026-06-03T12:00:00.100000+00:00"),
			Delayed: ptrTime("2026-06-03T12:00:01.100000+00:00"),
			Purpose: ptrStr("create"),
			Retries: 1,
			Message: ptrStr("Expected recoverable error."),
		}, `{"started":"2026-06-03T12:00:00.100000+00:00","delayed":"2026-06-03T12:00:01.100000+00:00","purpose":"create","retries":1,"success":false,"failure":false,"message":"Expected recoverable error."}`},
		{"wire-format create_fn", Record{
			Started: ptrTime("2026-01-01T00:00:00.000000+00:00"),
			Purpose: ptrStr("create"),
			Retries: 1,
			Success: true,
		}, `{"started":"2026-01-01T00:00:00.000000+00:00","purpose":"create","retries":1,"success":true,"failure":false}`},
		{"all fields in order", Record{
			Started: ptrTime("2026-01-01T00:00:00Z"),
			Stopped: ptrTime("2026-01-01T00:00:02Z"),
			Delayed: ptrTime("2026-01-01T00:00:01Z"),
			Purpose: ptrStr("update"),
			Retries: 3,
			Failure: true,
			Message: ptrStr("boom"),
			Subrefs: []string{"create_fn/item1", "create_fn/item2"},
		}, `{"started":"2026-01-01T00:00:00.000000+00:00","stopped":"2026-01-01T00:00:02.000000+00:00","delayed":"2026-01-01T00:00:01.000000+00:00","purpose":"update","retries":3,"success":false,"failure":true,"message":"boom","subrefs":["create_fn/item1","create_fn/item2"]}`},
		{"empty subrefs", Record{Subrefs: []string{}}, `{"retries":0,"success":false,"failure":false,"subrefs":[]}`},
		// As Python's json.dumps(..., separators=(',', ':')) writes it.
		{"python escaping", Record{Message: ptrStr("<é> & \u2028 \U0001F600 \x7f \x01 \"q\"")},
			`{"retries":0,"success":false,"failure":false,"message":"<\u00e9> & \u2028 \ud83d\ude00 \u007f \u0001 \"q\""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.MarshalJSON()
			if err != nil || string(got) != tt.want {
				t.Errorf("MarshalJSON() =\n  %s, %v\nwant\n  %s", got, err, tt.want)
			}
			if enc := tt.r.Encode(); enc != tt.want {
				t.Errorf("Encode() = %s", enc)
			}
			back, err := DecodeRecord(string(got))
			if err != nil || !reflect.DeepEqual(*back, tt.r) {
				t.Errorf("round trip: %+v, %v; want %+v", back, err, tt.r)
			}
		})
	}
}

func TestDecodeRecord(t *testing.T) {
	tests := []struct {
		name    string
		s       string
		want    *Record
		wantErr bool
	}{
		{"null", "null", nil, false},
		{"empty object", "{}", &Record{}, false},
		{"old naive timestamps and no failure field",
			`{"started": "2020-02-14T16:58:25.396364", "stopped": "2020-02-14T16:58:25.401844", "retries": 1, "success": true}`,
			&Record{Started: ptrTime("2020-02-14T16:58:25.396364Z"), Stopped: ptrTime("2020-02-14T16:58:25.401844Z"), Retries: 1, Success: true}, false},
		{"nulls everywhere",
			`{"started":null,"stopped":null,"delayed":null,"purpose":null,"retries":null,"success":null,"failure":null,"message":null,"subrefs":null}`,
			&Record{}, false},
		{"unknown fields ignored", `{"retries":2,"extra":{"x":1}}`, &Record{Retries: 2}, false},
		{"integral float retries", `{"retries":2.0}`, &Record{Retries: 2}, false},
		{"subrefs", `{"subrefs":["a/b"]}`, &Record{Subrefs: []string{"a/b"}}, false},
		{"fractional retries", `{"retries":2.5}`, nil, true},
		{"string retries", `{"retries":"2"}`, nil, true},
		{"numeric success", `{"success":1}`, nil, true},
		{"bad timestamp", `{"started":"yesterday"}`, nil, true},
		{"numeric timestamp", `{"started":12345}`, nil, true},
		{"non-string subrefs", `{"subrefs":[1]}`, nil, true},
		{"non-string purpose", `{"purpose":{}}`, nil, true},
		{"not an object", `[1]`, nil, true},
		{"a number", `5`, nil, true},
		{"not JSON", `{started`, nil, true},
		{"empty string", ``, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRecord(tt.s)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodeRecord() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeRecord() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRecordUnmarshalLeavesRecordOnError(t *testing.T) {
	r := Record{Retries: 7}
	if err := r.UnmarshalJSON([]byte(`{"retries":1,"success":"yes"}`)); err == nil {
		t.Fatal("expected an error")
	}
	if r.Retries != 7 {
		t.Errorf("record modified on error: %+v", r)
	}
	if err := r.UnmarshalJSON([]byte(`null`)); err != nil || r.Retries != 7 {
		t.Errorf("null: %+v, %v", r, err)
	}
}

func TestRecordEqual(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 1000, time.UTC)
	t1ns := t1.Add(10) // below microsecond precision
	t2 := t1.Add(time.Second)
	tests := []struct {
		name string
		a, b *Record
		want bool
	}{
		{"nils", nil, nil, true},
		{"nil vs zero", nil, &Record{}, false},
		{"zeros", &Record{}, &Record{}, true},
		{"same time", &Record{Started: &t1}, &Record{Started: &t1ns}, true},
		{"different time", &Record{Started: &t1}, &Record{Started: &t2}, false},
		{"different retries", &Record{Retries: 1}, &Record{}, false},
		{"nil vs empty subrefs", &Record{Subrefs: []string{}}, &Record{}, false},
		{"same subrefs", &Record{Subrefs: []string{"a"}}, &Record{Subrefs: []string{"a"}}, true},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%s: Equal() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRecordAsMapAndBack(t *testing.T) {
	r := Record{Started: ptrTime("2026-01-01T00:00:00Z"), Retries: 2, Success: true, Subrefs: []string{"x"}}
	m := r.asMap()
	want := map[string]any{
		"started": "2026-01-01T00:00:00.000000+00:00", "stopped": nil, "delayed": nil,
		"purpose": nil, "retries": int64(2), "success": true, "failure": false,
		"message": nil, "subrefs": []any{"x"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("asMap() = %#v", m)
	}
	back, err := recordFromValue(m)
	if err != nil || !reflect.DeepEqual(*back, r) {
		t.Errorf("recordFromValue() = %+v, %v", back, err)
	}
}

func TestLooksLikeRecord(t *testing.T) {
	tests := map[string]bool{
		`{"retries":1,"success":true,"failure":false}`: true,
		`{"started":"x"}`:                    true,
		`{}`:                                 false,
		`{"spec":{"field":"value"}}`:         false,
		`{"retries":1,"spec":{}}`:            false,
		`"string"`:                           false,
		`not json`:                           false,
		"{\"spec\":{\"duration\":\"1m\"}}\n": false,
		`{"started":"2026-01-01T00:00:00.000000+00:00"}`: true,
	}
	for s, want := range tests {
		if got := looksLikeRecord(s); got != want {
			t.Errorf("looksLikeRecord(%q) = %v, want %v", s, got, want)
		}
	}
}
