// Email templates: the list, and one template's editor (subject, HTML and text in Liquid), its
// versions with publication, and a live preview of the latest version with sample JSON data.
import { api, ApiError } from "./api.js";
import { badge, field, h, replace, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import { Preview, PreviewRequest, PublishRequest, Template, TemplateBody, TemplateSummary, TemplateVersion } from "./fields.js";

const STARTER = {
  subject: "Welcome, {{ name }}",
  html: "<p>Hello {{ name }},</p>\n<p>Thanks for joining.</p>",
  text: "Hello {{ name }}, thanks for joining.",
};
// Sample data is read as you type; the preview waits for a pause this long.
const PREVIEW_PAUSE_MS = 400;

export async function templatesPage() {
  const templates = await api("GET", "/templates");
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Templates"),
      h("p", { class: "muted" }, "Liquid templates Herald renders when a send names one: { \"template\": { \"id\", \"data\" } }.")),
    templates.length ? templateTable(templates) : h("p", { class: "empty" }, "No template yet."),
    newTemplateForm());
}

function templateTable(templates) {
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "Email templates by name"),
    h("thead", {}, h("tr", {}, ["Name", "Id", "Draft", "Published", "Updated"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, templates.map((template) => h("tr", { "data-template": template[TemplateSummary.id] },
      h("th", { scope: "row" }, link(`/console/templates/${template[TemplateSummary.id]}`, template[TemplateSummary.name])),
      h("td", {}, h("code", {}, template[TemplateSummary.id])),
      h("td", {}, `v${template[TemplateSummary.version]}`),
      h("td", {}, template[TemplateSummary.publishedVersion] ? `v${template[TemplateSummary.publishedVersion]}` : "—"),
      h("td", {}, when(template[TemplateSummary.updatedAt]))))));
}

function newTemplateForm() {
  const name = h("input", { name: "name", required: true, maxlength: "100" });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Create template");
  return h("section", { class: "card", "aria-labelledby": "new-template" },
    h("h2", { id: "new-template" }, "New template"),
    h("form", {
      class: "inline-form",
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        const body = { [TemplateBody.name]: name.value.trim(), [TemplateBody.subject]: STARTER.subject, [TemplateBody.html]: STARTER.html, [TemplateBody.text]: STARTER.text };
        const created = await act(() => api("POST", "/templates", body), "Template created");
        submit.disabled = false;
        if (created) go(`/console/templates/${created[Template.id]}`);
      },
    }, field("Name", name, "Starts as version 1 with an example you can edit"), submit));
}

export async function templatePage(id) {
  const template = await api("GET", `/templates/${encodeURIComponent(id)}`);
  const preview = previewCard(template);
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, template[Template.name]),
      h("p", { class: "muted" }, link("/console/templates", "All templates"), " · ", h("code", {}, template[Template.id]))),
    h("div", { class: "columns" }, editorCard(template), preview.card),
    versionsCard(template),
    deleteCard(template));
}

function editorCard(template) {
  const draft = template[Template.draft];
  const subject = h("input", { name: "subject", value: draft[TemplateVersion.subject], required: true, maxlength: "998" });
  const html = h("textarea", { name: "html", class: "code", rows: "12", required: true, spellcheck: "false" });
  html.value = draft[TemplateVersion.html];
  const text = h("textarea", { name: "text", class: "code", rows: "5", spellcheck: "false" });
  text.value = draft[TemplateVersion.text] ?? "";
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Save as new draft");
  return h("section", { class: "card", "aria-labelledby": "editor-title" },
    h("h2", { id: "editor-title" }, `Draft: version ${template[Template.version]}`),
    h("form", {
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        const body = { [TemplateBody.subject]: subject.value, [TemplateBody.html]: html.value };
        if (text.value.trim()) body[TemplateBody.text] = text.value;
        const saved = await act(() => api("PUT", `/templates/${template[Template.id]}`, body), "Saved as a new draft version");
        submit.disabled = false;
        if (saved) rerender();
      },
    },
    field("Subject", subject, "Liquid, not HTML-escaped: {{ name }}"),
    field("HTML", html, "Variables are HTML-escaped; {{ value | default: \"…\" }} makes one optional"),
    field("Text (optional)", text, "The plain-text part, not escaped"),
    submit));
}

// The latest saved version rendered with the sample data, again after each pause in typing.
function previewCard(template) {
  const data = h("textarea", { name: "data", class: "code", rows: "5", spellcheck: "false" });
  data.value = JSON.stringify(sampleData(template[Template.draft]), null, 2);
  const result = h("div", { "aria-live": "polite", "data-preview": "" });
  let timer;
  const refresh = () => showPreview(template[Template.id], data.value, result);
  data.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, PREVIEW_PAUSE_MS);
  });
  refresh();
  return {
    card: h("section", { class: "card", "aria-labelledby": "preview-title" },
      h("h2", { id: "preview-title" }, "Preview"),
      field("Sample data (JSON)", data, "As a send's template.data; the preview shows the latest saved version"),
      result),
  };
}

async function showPreview(id, written, result) {
  let data;
  try {
    data = JSON.parse(written || "{}");
  } catch {
    replace(result, h("p", { class: "message message-error" }, "The sample data is not valid JSON."));
    return;
  }
  try {
    const shown = await api("POST", `/templates/${id}/preview`, { [PreviewRequest.data]: data });
    replace(result, renderedParts(shown));
  } catch (error) {
    replace(result, h("p", { class: "message message-error" }, error instanceof ApiError ? error.message : "The preview failed."));
  }
}

function renderedParts(shown) {
  // The HTML is shown in a frame without scripts, forms or this page's origin (an empty sandbox),
  // under this page's Content-Security-Policy: no script runs and nothing loads from elsewhere.
  const frame = h("iframe", { class: "preview-frame", sandbox: "", title: "The rendered HTML part", referrerpolicy: "no-referrer" });
  frame.srcdoc = shown[Preview.html];
  const text = shown[Preview.text];
  return h("div", {},
    h("p", {}, h("strong", {}, "Subject: "), h("span", { "data-subject": "" }, shown[Preview.subject])),
    frame,
    h("details", {}, h("summary", {}, "HTML source"), h("pre", { class: "code", "data-html": "" }, shown[Preview.html])),
    text === null ? null : h("details", {}, h("summary", {}, "Text part"), h("pre", { class: "code", "data-text": "" }, text)));
}

// {} with each top-level variable the draft names set to its own name: a start to edit.
function sampleData(draft) {
  const parts = [draft[TemplateVersion.subject], draft[TemplateVersion.html], draft[TemplateVersion.text] ?? ""].join("\n");
  const names = [...parts.matchAll(/\{\{-?\s*([A-Za-z_][\w-]*)/g)].map((match) => match[1]);
  return Object.fromEntries([...new Set(names)].map((name) => [name, name]));
}

function versionsCard(template) {
  const published = template[Template.publishedVersion];
  return h("section", { class: "card", "aria-labelledby": "versions-title" },
    h("h2", { id: "versions-title" }, "Versions"),
    h("p", { class: "muted" }, published
      ? `Sends without a version use version ${published}.`
      : "Nothing is published yet: sends must name a version until one is."),
    h("table", { class: "table table-compact" },
      h("caption", { class: "visually-hidden" }, "Kept versions, newest first"),
      h("thead", {}, h("tr", {}, ["Version", "Subject", "Saved", "By", ""].map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, [...template[Template.versions]].reverse().map((version) => versionRow(template, version)))));
}

function versionRow(template, version) {
  const number = version[TemplateVersion.version];
  return h("tr", { "data-version": String(number) },
    h("th", { scope: "row" }, `v${number}`, " ", version[TemplateVersion.published] ? badge("published") : null),
    h("td", {}, version[TemplateVersion.subject]),
    h("td", {}, when(version[TemplateVersion.createdAt])),
    h("td", {}, version[TemplateVersion.createdBy]),
    h("td", {}, version[TemplateVersion.published] ? null : h("button", {
      type: "button",
      class: "button button-small",
      "aria-label": `Publish version ${number}`,
      onclick: async () => {
        const done = await act(() => api("POST", `/templates/${template[Template.id]}/publish`, { [PublishRequest.version]: number }), `Version ${number} published`);
        if (done) rerender();
      },
    }, "Publish")));
}

function deleteCard(template) {
  return h("section", { class: "card", "aria-labelledby": "delete-title" },
    h("h2", { id: "delete-title" }, "Delete"),
    h("p", { class: "muted" }, "Removes the template and its versions; sends naming it are refused. Jobs already accepted keep what they rendered."),
    h("button", {
      type: "button",
      class: "button button-danger",
      onclick: async () => {
        if (!confirm(`Delete the template "${template[Template.name]}"?`)) return;
        if (await act(() => api("DELETE", `/templates/${template[Template.id]}`), "Template deleted")) go("/console/templates");
      },
    }, "Delete template"));
}
