// Keys & signing: the account's named API keys (issue 38) with their scopes, sending domains and
// last use; a new key and a rotated one are shown once, a key is revoked after a confirmation; the
// webhook signing secret beside them (account.js). Herald keeps only a key's hash: its secret is in
// the one answer that made it, and the list shows a preview (hk_…9f3e).
import { api } from "./api.js";
import { field, h, replace, secretOnce, when, zoneName } from "./dom.js";
import { act } from "./app.js";
import { signingCard } from "./account.js";
import { may, mayHandOut, refusal } from "./access.js";
import { CreateKeyRequest, Key, NewKey, RotateKeyRequest } from "./fields.js";

// The scopes a key may have (herald/domain/access.py), with what each allows.
const SCOPES = [
  ["send", "Send", "send emails and webhooks"],
  ["read", "Read", "read jobs, activity and the account's settings"],
  ["manage", "Manage", "providers, domains, keys, signing, suppressions, endpoints, members and billing"],
  ["full", "Full", "all of the above"],
];

// 24 hours is chosen by default: time to deploy the new secret everywhere before the old one stops.
// No grace is for a leaked key, and asks to confirm.
const GRACE = [["0", "No grace: the current secret stops now (a leaked key)"], ["3600", "1 hour"], ["86400", "24 hours"], ["604800", "7 days"]];
const DEFAULT_GRACE = "86400";
const ONCE = "Shown this once: you will not see it again. Herald keeps only its hash; copy it now into your secrets manager.";

export async function keysPage() {
  const [keys, status] = await Promise.all([api("GET", "/account/keys"), api("GET", "/account/webhook-secret")]);
  const revealed = h("div", { "aria-live": "polite" });
  const list = h("div", {});
  // After a change the list is drawn again from the API, the new secret (if any) shown above it.
  const show = async (title, issued, note) => {
    replace(list, keyTable(await api("GET", "/account/keys"), show));
    if (!issued) return;
    replace(revealed, secretOnce(title, issued[NewKey.key], note));
    revealed.querySelector("button")?.focus();
  };
  replace(list, keyTable(keys, show));
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Keys & signing")),
    revealed,
    h("section", { class: "card", "aria-labelledby": "keys-title" },
      h("h2", { id: "keys-title" }, "API keys"),
      h("p", { class: "muted" }, "Each key has a name, the scopes it may use and, if you choose, the sending domains it may send from and an expiry. Herald stores only a hash of a key, so it cannot show one again: rotate a key to get a new secret."),
      list),
    h("div", { class: "columns" }, createCard(show), signingCard(status, revealed)));
}

function keyTable(keys, show) {
  if (!keys.length) return h("p", { class: "empty" }, "No keys: create one below to call the API.");
  return h("table", { class: "table keys" },
    h("thead", {}, h("tr", {}, ["Name", "Scopes", "Domains", "Key", "Created", "Last used", "Expires", ""].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, keys.map((key) => keyRow(key, show))));
}

function keyRow(key, show) {
  const name = key[Key.name];
  const previous = key[Key.previousValidUntil];
  const expires = key[Key.expiresAt];
  return h("tr", { "data-key": key[Key.id] },
    h("th", { scope: "row" }, name),
    h("td", {}, key[Key.scopes].join(", ")),
    h("td", { class: "target" }, key[Key.domains].length ? key[Key.domains].join(", ") : "any"),
    h("td", {},
      h("code", { "data-preview": "" }, key[Key.preview]),
      previous && new Date(previous) > new Date()
        ? h("span", { class: "muted sub", "data-grace": "" }, `The previous secret works until ${when(previous)}.`)
        : null),
    h("td", {}, when(key[Key.createdAt]), h("span", { class: "muted sub" }, `by ${key[Key.createdBy]}`)),
    h("td", {}, key[Key.lastUsedAt] ? when(key[Key.lastUsedAt]) : "never"),
    h("td", {}, !expires ? "never"
      : new Date(expires) > new Date() ? when(expires)
        : h("span", { class: "error-text", "data-expired": "" }, `expired ${when(expires)}`)),
    h("td", {}, keyActions(key, show)));
}

function keyActions(key, show) {
  if (!may("keys")) return h("span", { class: "muted" }, "—");
  const name = key[Key.name];
  const path = `/account/keys/${encodeURIComponent(key[Key.id])}`;
  const revoke = h("button", {
    type: "button",
    class: "button button-small button-danger",
    "aria-label": `Revoke ${name}`,
    onclick: async () => {
      if (!confirm(`Revoke ${name}? Every request made with it is refused from now on; this cannot be undone.`)) return;
      if (await act(() => api("DELETE", path), `${name} revoked`)) await show();
    },
  }, "Revoke");
  // A key with scopes beyond the person's role cannot be rotated by them (they would learn its secret).
  if (!mayHandOut(key[Key.scopes])) return h("div", { class: "actions" }, revoke);
  const grace = h("select", { name: "grace" }, GRACE.map(([value, label]) => h("option", { value, selected: value === DEFAULT_GRACE }, label)));
  const submit = h("button", { type: "submit", class: "button button-small button-primary" }, "Rotate now");
  const rotate = h("details", { class: "rotate" },
    h("summary", { class: "button button-small", "aria-label": `Rotate ${name}` }, "Rotate"),
    h("form", {
      onsubmit: async (event) => {
        event.preventDefault();
        const seconds = Number(grace.value);
        if (seconds === 0 && !confirm(`Rotate ${name} without grace? Its current secret stops working at once.`)) return;
        submit.disabled = true;
        const rotated = await act(() => api("POST", `${path}/rotate`, { [RotateKeyRequest.graceSeconds]: seconds }), `New secret issued for ${name}`);
        submit.disabled = false;
        if (!rotated) return;
        const until = rotated[NewKey.previousValidUntil];
        const note = until ? `The previous secret works until ${when(until)}.` : "The previous secret no longer works.";
        await show(`The new secret of ${name}`, rotated, `${ONCE} ${note}`);
      },
    }, field("Grace for the current secret", grace), submit));
  return h("div", { class: "actions" }, rotate, revoke);
}

function createCard(show) {
  const section = (...children) => h("section", { class: "card", "aria-labelledby": "create-key-title" },
    h("h2", { id: "create-key-title" }, "Create a key"), ...children);
  if (!may("keys")) return section(h("p", { class: "muted", "data-refused": "" }, refusal("keys")));
  const name = h("input", { name: "name", required: true, maxlength: "100", autocomplete: "off", placeholder: "CI, billing service…" });
  const boxes = SCOPES.map(([value, label, what]) => {
    const allowed = mayHandOut([value]);
    const box = h("input", { type: "checkbox", name: "scopes", value, disabled: !allowed });
    return h("label", { class: "check" }, box, h("span", {}, h("strong", {}, label), ` — ${what}`, allowed ? "" : " (beyond your role)"));
  });
  const domains = h("input", { name: "domains", autocomplete: "off", placeholder: "mail.example.com, news.example.com" });
  const expires = h("input", { type: "datetime-local", name: "expires" });
  const problem = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Create key");
  const form = h("form", {
    "aria-label": "Create a key",
    onsubmit: async (event) => {
      event.preventDefault();
      const scopes = boxes.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
      if (!scopes.length) {
        replace(problem, h("p", { class: "form-error", role: "alert" }, "Choose at least one scope."));
        return;
      }
      const body = { [CreateKeyRequest.name]: name.value.trim(), [CreateKeyRequest.scopes]: scopes };
      const listed = domains.value.split(/[\s,]+/).filter(Boolean);
      if (listed.length) body[CreateKeyRequest.domains] = listed;
      if (expires.value) body[CreateKeyRequest.expiresAt] = new Date(expires.value).toISOString();
      submit.disabled = true;
      const created = await act(() => api("POST", "/account/keys", body), `${body[CreateKeyRequest.name]} created`, problem);
      submit.disabled = false;
      if (!created) return;
      form.reset();
      await show(`Your new key: ${created[NewKey.name]}`, created, ONCE);
    },
  },
  field("Name", name),
  h("fieldset", { class: "field scopes" }, h("legend", {}, "Scopes"), boxes),
  field("Sending domains (optional)", domains, "Domains of this account the key may send from, separated by commas; empty: any."),
  field(`Expires (optional, ${zoneName()})`, expires, "Empty: the key works until it is revoked."),
  problem,
  submit);
  return section(form);
}
