package port

import (
	"strconv"
	"strings"
)

// webhookPresets are Kopf's admission servers that kopf-go has, with the
// facade's function that makes each of a kopf.WebhookServer ("": the
// server itself). Kopf's tunnels (kopf.WebhookNgrokTunnel,
// kopf.WebhookAutoTunnel) have no equivalent: their assignments are left
// as TODO(port).
var webhookPresets = map[string]string{
	"kopf.WebhookServer":              "",
	"kopf.WebhookAutoServer":          "kopf.WebhookAutoServer",
	"kopf.WebhookK3dServer":           "kopf.WebhookK3dServer",
	"kopf.WebhookMinikubeServer":      "kopf.WebhookMinikubeServer",
	"kopf.WebhookDockerDesktopServer": "kopf.WebhookDockerDesktopServer",
}

// webhookServerFields are the keyword arguments of Kopf's WebhookServer
// that kopf-go's has, by their Go fields and value kinds ("s" a string,
// "i" an int, "d" seconds as a time.Duration, "l" a list of strings).
var webhookServerFields = map[string]struct{ field, kind string }{
	"addr": {"Addr", "s"}, "port": {"Port", "i"}, "host": {"Host", "s"}, "path": {"Path", "s"},
	"cafile": {"CAFile", "s"}, "certfile": {"CertFile", "s"}, "pkeyfile": {"KeyFile", "s"},
	"extra_sans": {"ExtraSANs", "l"}, "file_check_interval": {"CheckInterval", "d"},
}

// webhookServer translates settings.admission.server = kopf.<Server>(...)
// in a startup handler into kopf-go's server of the same preset, at the
// settings' field goPath (Admission.Server, a *kopf.WebhookServer).
func (f *fnCtx) webhookServer(goPath string, val Node) error {
	if !val.Is("Call") {
		return fail("a value of settings.admission.server")
	}
	name := dottedName(val.Get("func"))
	preset, ok := webhookPresets[name]
	if !ok {
		return fail("%s: kopf-go has no such admission server (no tunnels); kopf.WebhookAutoServer(kopf.WebhookServer{}) chooses a local server or, in a cluster, the Service", name)
	}
	if len(val.List("args")) > 0 {
		return fail("%s's positional arguments", name)
	}
	var fields []string
	for _, k := range val.List("keywords") {
		arg := k.Str("arg")
		spec, ok := webhookServerFields[arg]
		if !ok {
			return fail("%s(%s=...) has no equivalent in kopf-go's WebhookServer", name, arg)
		}
		code, err := f.webhookServerValue(spec.kind, k.Get("value"))
		if err != nil {
			return err
		}
		fields = append(fields, spec.field+": "+code)
	}
	f.use("kopf")
	server := "kopf.WebhookServer{" + strings.Join(fields, ", ") + "}"
	if preset == "" {
		f.line("kw.Settings.%s = &%s", goPath, server)
		return nil
	}
	f.line("{")
	f.line("server := %s(%s)", preset, server)
	f.line("kw.Settings.%s = &server", goPath)
	f.line("}")
	return nil
}

// webhookServerValue is the Go of a server's keyword argument of a kind
// of webhookServerFields.
func (f *fnCtx) webhookServerValue(kind string, v Node) (string, error) {
	switch kind {
	case "i", "d":
		n, ok := constNumber(v)
		if !ok || kind == "i" && strings.ContainsAny(n, ".eE") {
			break
		}
		if kind == "d" {
			f.use("time")
			return "time.Duration(" + n + " * float64(time.Second))", nil
		}
		return n, nil
	case "l":
		if !v.Is("List", "Tuple") {
			break
		}
		var items []string
		for _, e := range v.List("elts") {
			s, ok := constString(e)
			if !ok {
				return "", fail("a server's list of names")
			}
			items = append(items, strconv.Quote(s))
		}
		return "[]string{" + strings.Join(items, ", ") + "}", nil
	default:
		x, err := f.expr(v)
		if err != nil {
			return "", err
		}
		if x.kind == kStr {
			return x.code, nil
		}
	}
	return "", fail("a value of a server's option")
}
