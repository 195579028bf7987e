// Members (who may sign in to the account, with which role) and the audit log (every change to the
// account, who made it, from where). Addresses, names, targets and details are people's text: shown
// with textContent only (dom.js).
import { api, ApiError } from "./api.js";
import { field, h, replace, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import { may, mayGrant, refusal } from "./access.js";
import {
  AuditActor,
  AuditLogEntry,
  AuditLogPage,
  InviteMemberRequest,
  Member,
  MemberRoleRequest,
  AUDIT_ACTIONS,
  ROLES,
} from "./fields.js";

const ROLE_TEXT = {
  owner: "Owner: everything, billing and ownership too",
  admin: "Admin: everything but billing",
  developer: "Developer: send, read, providers, domains and keys",
  viewer: "Viewer: reads only",
};

// Every action the audit log records (herald/domain/audit.py's AuditAction; a unit test keeps them equal).
function roleSelect(name, value) {
  return h("select", { name }, ROLES.filter(mayGrant).map((role) => h("option", { value: role, selected: role === value }, ROLE_TEXT[role])));
}

export async function membersPage() {
  const members = await api("GET", "/account/members");
  const manage = may("members");
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Members"),
      h("p", { class: "muted" }, "The people who sign in to this account with their own email, and what their role lets them do.")),
    manage ? inviteForm() : h("p", { class: "message message-info", "data-refused": "" }, refusal("members")),
    members.length
      ? h("table", { class: "table members" },
        h("thead", {}, h("tr", {}, ["Email", "Role", "Status", "Invited by", "Joined", ""].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, members.map((member) => memberRow(member, manage))))
      : h("p", { class: "empty" }, "Nobody but the account's owner yet."));
}

function inviteForm() {
  const email = h("input", { type: "email", name: "email", required: true, autocomplete: "off", placeholder: "ana@example.com" });
  const role = roleSelect("role", "developer");
  const problem = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Invite");
  return h("form", {
    class: "card inline-form",
    "aria-label": "Invite a member",
    onsubmit: async (event) => {
      event.preventDefault();
      const address = email.value.trim();
      submit.disabled = true;
      const invited = await act(() => api("POST", "/account/members", {
        [InviteMemberRequest.email]: address, [InviteMemberRequest.role]: role.value,
      }), `${address} invited: they sign in with that address to join`, problem);
      submit.disabled = false;
      if (invited) rerender();
    },
  }, field("Email", email), field("Role", role), submit, problem);
}

function memberRow(member, manage) {
  const email = member[Member.email];
  const role = member[Member.role];
  const invited = member[Member.status] === "invited";
  const path = `/account/members/${encodeURIComponent(member[Member.id])}`;
  // The role of someone with more power than the person is theirs to keep (the API refuses too).
  const editable = manage && mayGrant(role);
  return h("tr", { "data-member": email },
    h("th", { scope: "row", class: "target" }, email),
    h("td", {}, editable ? roleForm(email, role, path) : role),
    h("td", {}, invited
      ? h("span", { class: "badge badge-invited" }, "invitation pending")
      : h("span", { class: "badge badge-active" }, "active")),
    h("td", { class: "target" }, member[Member.invitedBy] || "—"),
    h("td", {}, invited ? h("span", { class: "muted" }, `invited ${when(member[Member.createdAt])}`) : when(member[Member.joinedAt])),
    h("td", {}, editable ? h("button", {
      type: "button",
      class: "button button-small button-danger",
      "aria-label": `Remove ${email}`,
      onclick: async () => {
        const question = invited ? `Withdraw the invitation of ${email}?` : `Remove ${email}? They can no longer sign in to this account.`;
        if (!confirm(question)) return;
        if (await act(() => api("DELETE", path), `${email} removed`)) rerender();
      },
    }, "Remove") : null));
}

function roleForm(email, role, path) {
  const chooser = h("select", { name: "role", "aria-label": `Role of ${email}` },
    ROLES.filter(mayGrant).map((name) => h("option", { value: name, selected: name === role }, name)));
  return h("form", {
    class: "actions",
    onsubmit: async (event) => {
      event.preventDefault();
      if (chooser.value === role) return;
      const changed = await act(() => api("PATCH", path, { [MemberRoleRequest.role]: chooser.value }), `${email} is now ${chooser.value}`);
      if (changed) rerender();
      else chooser.value = role;
    },
  }, chooser, h("button", { type: "submit", class: "button button-small", "aria-label": `Change ${email}'s role` }, "Change"));
}

export async function auditPage() {
  const query = new URLSearchParams(location.search);
  const filters = { action: query.get("action") || "", actor: query.get("actor") || "", cursor: query.get("cursor") || "" };
  const parameters = new URLSearchParams(Object.entries(filters).filter(([, value]) => value));
  const head = h("header", { class: "page-head" }, h("h1", {}, "Audit log"),
    h("p", { class: "muted" }, "Every change to the account, newest first: who made it (a member, a key, the operator), from which address, and what changed."));
  let page;
  try {
    page = await api("GET", `/account/audit?${parameters}`);
  } catch (error) {
    // A filter the API refuses keeps the form, with the API's own words next to it.
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    return h("div", {}, head, auditFilters(filters), h("p", { class: "form-error", role: "alert" }, error.message));
  }
  const entries = page[AuditLogPage.entries];
  const next = page[AuditLogPage.nextCursor];
  return h("div", {}, head, auditFilters(filters),
    entries.length
      ? h("table", { class: "table audit" },
        h("thead", {}, h("tr", {}, ["When", "Who", "Action", "Target", "IP", "Details"].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, entries.map(auditRow)))
      : h("p", { class: "empty" }, filters.action || filters.actor ? "No change matches these filters." : "No change recorded yet."),
    auditPager(filters, next));
}

function auditFilters(filters) {
  const action = h("select", { name: "action" }, h("option", { value: "" }, "Any action"),
    AUDIT_ACTIONS.map((name) => h("option", { value: name, selected: name === filters.action }, name)));
  const actor = h("input", { type: "search", name: "actor", value: filters.actor, autocomplete: "off", placeholder: "ana@example.com, CI key, key_…" });
  return h("form", {
    class: "filters",
    role: "search",
    "aria-label": "Filter the audit log",
    onsubmit: (event) => {
      event.preventDefault();
      const chosen = new URLSearchParams();
      if (action.value) chosen.set("action", action.value);
      if (actor.value.trim()) chosen.set("actor", actor.value.trim());
      go(`/console/audit${chosen.size ? `?${chosen}` : ""}`);
    },
  }, field("Action", action), field("Who", actor), h("button", { type: "submit", class: "button" }, "Filter"),
  h("a", { href: "/console/audit", "data-route": "", class: "button button-quiet" }, "Clear"));
}

function auditRow(entry) {
  const actor = entry[AuditLogEntry.actor] || {};
  const details = Object.entries(entry[AuditLogEntry.details] || {});
  return h("tr", { "data-action": entry[AuditLogEntry.action] },
    h("td", {}, when(entry[AuditLogEntry.at])),
    h("td", { class: "target" }, actor[AuditActor.name] || actor[AuditActor.id] || "—",
      h("span", { class: "muted sub" }, actor[AuditActor.type] || "")),
    h("td", {}, h("code", {}, entry[AuditLogEntry.action])),
    h("td", { class: "target" }, entry[AuditLogEntry.target] || "—"),
    h("td", {}, entry[AuditLogEntry.ip] || "—"),
    h("td", { class: "target" }, details.length
      ? details.map(([name, value]) => h("span", { class: "detail" }, `${name}: ${typeof value === "string" ? value : JSON.stringify(value)}`))
      : "—"));
}

function auditPager(filters, next) {
  const at = (cursor) => {
    const query = new URLSearchParams(Object.entries({ ...filters, cursor }).filter(([, value]) => value));
    return `/console/audit${query.size ? `?${query}` : ""}`;
  };
  return h("nav", { class: "pager", "aria-label": "Pages" },
    filters.cursor ? link(at(""), "← Newest") : h("span", {}),
    next ? link(at(next), "Older →") : h("span", {}));
}
