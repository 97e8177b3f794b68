package kopf

import (
	"github.com/kopf-go/kopf/runtime/progress"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Settings: Kopf's OperatorSettings, changed through WithSettings. Every
// group and field is documented in package runtime/settings, with its
// Kopf equivalent, and in docs/settings.md.
type (
	// Settings are all the operator's settings (Kopf's
	// kopf.OperatorSettings), grouped as Kopf's are: Persistence,
	// Execution, Queueing, Watching, Networking, Posting.
	Settings = settings.Settings
	// PersistenceSettings are Kopf's settings.persistence.
	PersistenceSettings = settings.Persistence
	// ExecutionSettings are Kopf's settings.execution.
	ExecutionSettings = settings.Execution
	// QueueingSettings are Kopf's settings.queueing.
	QueueingSettings = settings.Queueing
	// WatchingSettings are Kopf's settings.watching.
	WatchingSettings = settings.Watching
	// WatchSelector is an explicit selector of a resource's watch
	// (WatchingSettings.Selectors; docs/filters.md).
	WatchSelector = settings.Selector
	// NetworkingSettings are Kopf's settings.networking.
	NetworkingSettings = settings.Networking
	// PostingSettings are Kopf's settings.posting.
	PostingSettings = settings.Posting
	// PeeringSettings are Kopf's settings.peering, with kopf-go's Lease
	// (docs/peering.md).
	PeeringSettings = settings.Peering
)

// DefaultSettings returns new settings with Kopf's defaults, the ones that
// WithSettings starts from.
func DefaultSettings() *Settings { return settings.Default() }

// Where the operator keeps its state in objects: the values of
// Settings.Persistence.ProgressStorage and DiffBaseStorage, as Kopf's
// storage classes. The zero value of each is usable, e.g.
// &kopf.StatusDiffBaseStorage{} keeps Kopf's default status field; see
// package runtime/progress for what each zero value means.
type (
	// ProgressStorage keeps the handlers' progress between cycles
	// (kopf.ProgressStorage).
	ProgressStorage = progress.ProgressStorage
	// DiffBaseStorage keeps an object's last handled essence
	// (kopf.DiffBaseStorage).
	DiffBaseStorage = progress.DiffBaseStorage
	// AnnotationsProgressStorage keeps the progress in annotations
	// (kopf.AnnotationsProgressStorage).
	AnnotationsProgressStorage = progress.AnnotationsProgressStorage
	// StatusProgressStorage keeps the progress in status.kopf.progress
	// (kopf.StatusProgressStorage).
	StatusProgressStorage = progress.StatusProgressStorage
	// SmartProgressStorage writes annotations, reads both (the default;
	// kopf.SmartProgressStorage).
	SmartProgressStorage = progress.SmartProgressStorage
	// MultiProgressStorage combines progress storages
	// (kopf.MultiProgressStorage).
	MultiProgressStorage = progress.MultiProgressStorage
	// AnnotationsDiffBaseStorage keeps the essence in the annotation
	// kopf.zalando.org/last-handled-configuration (the default;
	// kopf.AnnotationsDiffBaseStorage).
	AnnotationsDiffBaseStorage = progress.AnnotationsDiffBaseStorage
	// StatusDiffBaseStorage keeps the essence in
	// status.kopf.last-handled-configuration, for objects whose
	// annotations cannot hold it (kopf.StatusDiffBaseStorage).
	StatusDiffBaseStorage = progress.StatusDiffBaseStorage
	// MultiDiffBaseStorage combines diff-base storages
	// (kopf.MultiDiffBaseStorage).
	MultiDiffBaseStorage = progress.MultiDiffBaseStorage
)
