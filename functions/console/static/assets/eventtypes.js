// Event types: the account's catalog of the events it sends to subscriptions (name, description,
// JSON Schema of the payload, version, deprecated and archived), a new type, and one type's page
// where its description and schema change (a new schema is a new version), it is deprecated,
// archived and brought back. Names, descriptions and schemas are the tenant's text: textContent only.
import { api } from "./api.js";
import { badge, facts, field, h, replace, toast, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import { may, refusal } from "./access.js";
import { EventType, EventTypeBody, EventTypeUpdate } from "./fields.js";

const SCHEMA_EXAMPLE = {
  type: "object",
  required: ["orderId"],
  properties: { orderId: { type: "string" }, amount: { type: "integer", minimum: 0 } },
};

export const typePath = (name) => `/console/event-types/${encodeURIComponent(name)}`;
const apiPath = (name) => `/event-types/${encodeURIComponent(name)}`;

export async function eventTypesPage() {
  const types = await api("GET", "/event-types?includeArchived=true");
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Event types"),
      h("p", { class: "muted" }, "The kinds of event this account sends to its subscriptions, each with an optional JSON Schema its payloads must meet.")),
    types.length ? typeTable(types) : h("p", { class: "empty" }, "No event type yet."),
    newTypeCard());
}

function typeTable(types) {
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "Event types by name"),
    h("thead", {}, h("tr", {}, ["Name", "Description", "Version", "State", "Updated"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, types.map((type) => h("tr", { "data-event-type": type[EventType.name] },
      h("th", { scope: "row" }, link(typePath(type[EventType.name]), h("code", {}, type[EventType.name]))),
      h("td", { class: "target" }, type[EventType.description] || "—"),
      h("td", {}, `v${type[EventType.version]}`),
      h("td", {}, flags(type)),
      h("td", {}, when(type[EventType.updatedAt]))))));
}

function flags(type) {
  const shown = [type[EventType.archived] && "archived", type[EventType.deprecated] && "deprecated"].filter(Boolean);
  return shown.length ? h("span", { class: "actions" }, shown.map(badge)) : badge("active");
}

// The schema as written, or why it cannot be sent: blank is no schema (any object), anything else
// must parse as JSON. The API judges the rest and answers its own sentence.
function readSchema(text) {
  if (!text.trim()) return { schema: null };
  try {
    return { schema: JSON.parse(text) };
  } catch (error) {
    return { problem: `The schema is not valid JSON: ${error.message}` };
  }
}

function schemaInput(schema) {
  const input = h("textarea", { name: "schema", class: "code", rows: "10", spellcheck: "false" });
  input.value = schema === null ? "" : JSON.stringify(schema, null, 2);
  return input;
}

function refused(problem, sentence) {
  replace(problem, h("p", { class: "form-error", role: "alert" }, sentence));
}

function newTypeCard() {
  const section = (...children) => h("section", { class: "card", "aria-labelledby": "new-type" },
    h("h2", { id: "new-type" }, "New event type"), ...children);
  if (!may("webhooks")) return section(h("p", { class: "muted", "data-refused": "" }, refusal("webhooks")));
  const name = h("input", { name: "name", required: true, maxlength: "100", autocomplete: "off", placeholder: "order.paid" });
  const description = h("input", { name: "description", maxlength: "1000", autocomplete: "off" });
  const schema = schemaInput(SCHEMA_EXAMPLE);
  const problem = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Create event type");
  return section(h("form", {
    "aria-label": "New event type",
    onsubmit: async (event) => {
      event.preventDefault();
      const read = readSchema(schema.value);
      if (read.problem) return refused(problem, read.problem);
      const body = { [EventTypeBody.name]: name.value.trim(), [EventTypeBody.schema]: read.schema };
      if (description.value.trim()) body[EventTypeBody.description] = description.value.trim();
      submit.disabled = true;
      const created = await act(() => api("POST", "/event-types", body), `${body[EventTypeBody.name]} created`, problem);
      submit.disabled = false;
      if (created) go(typePath(created[EventType.name]));
    },
  },
  h("div", { class: "form-grid" },
    field("Name", name, "Lower-case words joined by dots"),
    field("Description (optional)", description, "What the event means, for those who subscribe to it")),
  field("Schema (JSON Schema 2020-12, optional)", schema, "Every event's payload is checked against it; empty: any JSON object"),
  problem,
  submit));
}

export async function eventTypePage(name) {
  const type = await api("GET", apiPath(name));
  const archived = type[EventType.archived];
  return h("div", {},
    h("p", { class: "crumbs" }, link("/console/event-types", "Event types"), " / ", h("code", {}, type[EventType.name])),
    h("header", { class: "page-head" }, h("h1", {}, type[EventType.name], " ", flags(type))),
    h("div", { class: "columns" },
      h("section", { class: "card", "aria-labelledby": "type-facts" },
        h("h2", { id: "type-facts" }, `Version ${type[EventType.version]}`),
        facts([
          ["Description", type[EventType.description] || "—"],
          ["Created", when(type[EventType.createdAt])],
          ["Updated", when(type[EventType.updatedAt])],
          ["Takes events", archived ? "No: archived" : type[EventType.deprecated] ? "Yes, but deprecated" : "Yes"],
        ]),
        h("h3", {}, "Schema"),
        type[EventType.schema] === null
          ? h("p", { class: "muted" }, "None: any JSON object is accepted.")
          : h("pre", { class: "code", "data-schema": "" }, JSON.stringify(type[EventType.schema], null, 2))),
      may("webhooks") ? editCard(type) : h("section", { class: "card", "aria-labelledby": "edit-type" },
        h("h2", { id: "edit-type" }, "Edit"), h("p", { class: "muted", "data-refused": "" }, refusal("webhooks")))),
    may("webhooks") ? retirementCard(type) : null);
}

function editCard(type) {
  const description = h("input", { name: "description", maxlength: "1000", autocomplete: "off", value: type[EventType.description] || "" });
  const schema = schemaInput(type[EventType.schema]);
  const problem = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Save");
  return h("section", { class: "card", "aria-labelledby": "edit-type" },
    h("h2", { id: "edit-type" }, "Edit"),
    h("form", {
      "aria-label": "Edit the event type",
      onsubmit: async (event) => {
        event.preventDefault();
        const read = readSchema(schema.value);
        if (read.problem) return refused(problem, read.problem);
        // Only what changed is sent: an unchanged schema keeps the version.
        const body = {};
        const written = description.value.trim() || null;
        if (written !== type[EventType.description]) body[EventTypeUpdate.description] = written;
        if (JSON.stringify(read.schema) !== JSON.stringify(type[EventType.schema])) body[EventTypeUpdate.schema] = read.schema;
        if (!Object.keys(body).length) return refused(problem, "Nothing changed.");
        submit.disabled = true;
        const saved = await act(() => api("PATCH", apiPath(type[EventType.name]), body), null, problem);
        submit.disabled = false;
        if (!saved) return;
        const version = saved[EventType.version];
        toast(version === type[EventType.version] ? "Saved" : `Saved as version ${version}`, "success");
        rerender();
      },
    },
    field("Description", description),
    field("Schema (JSON Schema 2020-12)", schema, "A changed schema makes the next version; empty: any JSON object"),
    problem,
    submit));
}

function retirementCard(type) {
  const name = type[EventType.name];
  const change = (body, done) => async () => {
    if (await act(() => api("PATCH", apiPath(name), body), done)) rerender();
  };
  const deprecated = type[EventType.deprecated];
  const button = (label, onclick, kind = "") => h("button", { type: "button", class: `button ${kind}`.trim(), onclick }, label);
  return h("section", { class: "card", "aria-labelledby": "retire-type" },
    h("h2", { id: "retire-type" }, "Deprecate or archive"),
    h("p", { class: "muted" }, "A deprecated type still takes events; the catalog marks it for retirement. An archived type takes no new event, subscriptions keep naming it, and it can be brought back as it was."),
    h("div", { class: "actions" },
      deprecated
        ? button("Undo deprecation", change({ [EventTypeUpdate.deprecated]: false }, `${name} is no longer deprecated`))
        : button("Deprecate", change({ [EventTypeUpdate.deprecated]: true }, `${name} is deprecated`)),
      type[EventType.archived]
        ? button("Un-archive", change({ [EventTypeUpdate.archived]: false }, `${name} takes events again`), "button-primary")
        : button("Archive", async () => {
          if (!confirm(`Archive ${name}? No new event of it is accepted until you bring it back.`)) return;
          if (await act(() => api("DELETE", apiPath(name)), `${name} archived`)) rerender();
        }, "button-danger")));
}
