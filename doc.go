/*
Package kopf is Kopf, the Kubernetes Operator Pythonic Framework, for Go: an
operator is a set of plain Go functions marked with comments, and kopf-gen
turns the marks into typed registration code for this runtime.

# A guided tour

An operator author writes a handler and marks it:

	//kopf:on.create kopfexamples
	func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) {
		kw.Logger.Info("And here we are!")
		return map[string]any{"message": "hello world"}, nil // into status.create_fn
	}

	func main() { os.Exit(kopf.Main(Register)) }

`go generate` (a `//go:generate kopf-gen` line) writes zz_generated.kopf.go
beside it: CreateFnKwargs, an alias of ChangingKwargs, which holds every
argument Kopf gives a changing handler (Body, Spec, Meta, Status, Name,
Namespace, Labels, Patch, Logger, Memo, Retry, Reason, Old, New, Diff, ...),
and a Register function that adds a ChangingHandler to a Registry. For a
resource with a Go type T (a //kopf:resource type or a built-in such as
v1/pods), CreateFnKwargs is TypedChangingKwargs[T]: the same arguments, and
Object, Old and New decoded as *T once per cycle. The handler's id is its function's name in
Kopf's spelling, create_fn (the marker's id= overrides it), so its result
lands in status.create_fn and its progress in kopf.zalando.org/create_fn,
exactly as for the Kopf operator with a function create_fn. Nothing in the generated code is magic: it
could be written by hand against this package.

`<binary> run -A` (the operator binary's command line, package runtime/cli, Kopf's `kopf run`) then:

  - resolves each handler's resource through the cluster's discovery;
  - watches it (runtime/watching: client-go's Reflector, no object cache);
  - hands each object's events to a worker (runtime/queueing), so objects
    are processed in parallel (up to settings.Queueing.WorkerLimit, 64, at
    once) and each one strictly in order, its latest version only;
  - detects the cause of each change (runtime/causes: creation, update,
    resume, deletion, ...) by comparing the object with the diff-base that
    Kopf keeps in the kopf.zalando.org/last-handled-configuration annotation
    (runtime/progress);
  - runs the matching handlers with retries and persisted progress
    (runtime/execution, runtime/reactor);
  - writes their results, the progress and the new diff-base back in as few
    patches as the resource allows.

Everything persisted is in Kopf's own format, so an operator can move
between Kopf and kopf-go without handlers running twice.

Handlers fail the way Kopf's do: return a *TemporaryError to be retried
after its delay, a *PermanentError to give up at once; any other error is
retried with the handler's backoff, and a panic is that handler's error,
never a crashed operator.

# The handler's context

A handler's ctx is the operator's: it is cancelled only when the operator
stops, ExitTimeout (settings.Queueing.ExitTimeout, 2 s) after the stop
begins, so that a handler in progress can finish and have its outcome
stored. It has no deadline: a handler's timeout= does not bound one call,
it is Kopf's total time across the handler's attempts, checked before each
retry (a call still running when it passes is not interrupted). A handler
that waits on something slow bounds that wait itself, with
context.WithTimeout. The context also carries what the operator gives
handlers: the event poster (Info, Warn, Exception, Event), the client
configuration (RESTConfig), the clients shared by the operator's handlers
(Client, and server-side apply with them: Apply, ApplyStatus) and, in a
changing handler, the registration of sub-handlers
(Subhandler).

# Absent labels and annotations in filter callbacks

Kopf gives a labels= or annotations= callback None for a missing key. The
runtime's matchers tell the two apart (Callback's fn gets the value and
whether it is present; Present and Absent match on presence alone). A
callback named in a marker that takes a *string gets nil for a missing key,
as Kopf's None; one that takes a string gets "" for it, as for an empty
value. Presence alone is also labels={key: PRESENT} or {key: ABSENT}.

# Children: Adopt and the hierarchies kit

Kopf's kopf.adopt(), kopf.label() and their kin prepare the objects a
handler creates so that they belong to the handled object: Adopt (owner
reference, name, namespace, labels at once), AppendOwnerReference,
RemoveOwnerReference, Label, HarmonizeNaming, AdjustNamespace. Children
are typed (*corev1.Pod) or untyped (*unstructured.Unstructured,
map[string]any), alone or in slices and lists; the owner is explicit:
OwnerOfBody(kw.Body), OwnerOf(kw.Object), OwnerOfKind (docs/hierarchies.md).

# Running: Main, Run and their options

Main runs an operator's command line (`run -A`, `run -n NS`, `version`);
Run runs the same operator embedded in another program, until its context
is cancelled (docs/embedding.md). Both take Options, functions that set
one thing each: WithSettings, WithNamespaces, WithAllNamespaces,
WithStandalone, WithConfig, WithLogger, WithReady, WithMemo.

# Activities

The operator-wide handlers that serve no object are markers too:
//kopf:on.startup (before anything is watched; the operator does not
start unless they succeed; kw.Settings may still be changed),
//kopf:on.cleanup (once everything has stopped), //kopf:on.login (the
credentials, at start and again on a 401; LoginViaClient and
LoginWithServiceAccount are the built-in logins) and //kopf:on.probe (the
health endpoint's values). They get ActivityKwargs, with the operator's
memo (WithMemo) itself; each object's Memo is a shallow copy of it
(docs/activities.md).

Functional options rather than an options struct, for three reasons.
Settings' zero value is not Kopf's defaults (events are posted, 64
workers, Kopf's finalizer), so a struct literal would silently zero what it
does not name, whereas WithSettings changes Kopf's defaults field by field,
as a Kopf operator changes its settings object. Main keeps its short form,
kopf.Main(Register), that every operator has. And options can be added
(webhooks and peering are to come) without breaking a
caller, the way Kopf adds keyword arguments to kopf.run().

Settings are Kopf's OperatorSettings with Kopf's groups, names and
defaults (Settings; docs/settings.md lists every one).

This package only re-exports the everyday API of the runtime packages; use
those directly for anything more specific.
*/
package kopf
