package hierarchies

// The options are Kopf's keyword arguments as values, in the way of
// controller-runtime's client options: each type implements the option
// interfaces of the functions that accept it, so an option that a function
// does not have is a compile error.
//
//	hierarchies.Adopt(pod, owner, hierarchies.Forced(true), hierarchies.Nested{"spec.template"})

// LabelOption is an option of Label: Forced, Nested.
type LabelOption interface{ applyToLabel(*config) }

// NamingOption is an option of HarmonizeNaming: Forced, Strict.
type NamingOption interface{ applyToNaming(*config) }

// NamespaceOption is an option of AdjustNamespace: Forced.
type NamespaceOption interface{ applyToNamespace(*config) }

// OwnerReferenceOption is an option of AppendOwnerReference and
// Owner.Reference: Controller, BlockOwnerDeletion.
type OwnerReferenceOption interface{ applyToOwnerReference(*config) }

// AdoptOption is an option of Adopt: Forced, Strict, Nested.
type AdoptOption interface{ applyToAdopt(*config) }

// Forced overwrites what the children already have (Kopf's forced=True):
// their labels of the same keys, their names, their namespace. Without it,
// only what is absent is added.
type Forced bool

// Strict names the children exactly as given (metadata.name) instead of
// asking the API server to generate a name with the given prefix and "-"
// (metadata.generateName), which is the default (Kopf's strict=True).
type Strict bool

// Nested lists the paths of objects nested in the children that are
// labelled too, such as "spec.template" (Kopf's nested=); see the package
// documentation for how paths are followed.
type Nested []string

// Controller is the owner reference's controller field; true by default.
type Controller bool

// BlockOwnerDeletion is the owner reference's blockOwnerDeletion field;
// true by default.
type BlockOwnerDeletion bool

// config is what the options of every function set.
type config struct {
	forced             bool
	strict             bool
	nested             []string
	controller         bool
	blockOwnerDeletion bool
}

func (f Forced) applyToLabel(c *config)     { c.forced = bool(f) }
func (f Forced) applyToNaming(c *config)    { c.forced = bool(f) }
func (f Forced) applyToNamespace(c *config) { c.forced = bool(f) }
func (f Forced) applyToAdopt(c *config)     { c.forced = bool(f) }

func (s Strict) applyToNaming(c *config) { c.strict = bool(s) }
func (s Strict) applyToAdopt(c *config)  { c.strict = bool(s) }

func (n Nested) applyToLabel(c *config) { c.nested = append(c.nested, n...) }
func (n Nested) applyToAdopt(c *config) { c.nested = append(c.nested, n...) }

func (v Controller) applyToOwnerReference(c *config)         { c.controller = bool(v) }
func (v BlockOwnerDeletion) applyToOwnerReference(c *config) { c.blockOwnerDeletion = bool(v) }
