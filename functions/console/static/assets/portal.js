// The portal: a tenant's customer manages its own webhook endpoints. The link's token rides in the
// address's fragment (never sent to a server); this script exchanges it once for the portal's
// HttpOnly cookie, then takes it out of the address bar and the history. Every text the tenant or
// the customer wrote (URLs, descriptions, event type names, errors) goes in through textContent.
import { api, ApiError } from "./api.js";
import { badge, field, h, replace, secretOnce, toast, when } from "./dom.js";
import {
  JobPage, ListedJob, NewSubscription, PortalEventType, PortalSession, PortalSessionRequest, Subscription, SubscriptionBody,
  TestDelivery,
} from "./fields.js";

const main = document.getElementById("main");
const state = { session: null, catalog: [], subscriptions: [], secret: null, deliveries: null };

async function start() {
  const token = location.hash.slice(1);
  if (token) history.replaceState(null, "", location.pathname);
  try {
    state.session = token
      ? await api("POST", "/portal/session", { [PortalSessionRequest.token]: token })
      : await api("GET", "/portal/session");
    await load();
  } catch (error) {
    ended(error);
  }
}

async function load() {
  const [catalog, subscriptions] = await Promise.all([
    api("GET", "/portal/event-types"),
    api("GET", "/portal/subscriptions"),
  ]);
  state.catalog = catalog;
  state.subscriptions = subscriptions;
  render();
}

function ended(error) {
  const spent = error instanceof ApiError && ["portal_link_invalid", "invalid_session"].includes(error.code);
  replace(main, h("section", { class: "card" },
    h("h1", {}, spent ? "This portal link can no longer be used" : "The portal could not be opened"),
    h("p", {}, error.message),
    spent ? h("p", { class: "muted" }, "Ask the service that sent you here for a new link.") : null));
}

// Every action: on a session that ended meanwhile, the page says so; any other refusal is a toast.
async function act(work, done) {
  try {
    await work();
    if (done) toast(done);
    await load();
  } catch (error) {
    if (error instanceof ApiError && error.code === "invalid_session") return ended(error);
    toast(error.message, "error");
  }
}

function render() {
  const who = state.session[PortalSession.subscriberId];
  replace(main,
    h("div", { class: "page-head" },
      h("div", {},
        h("h1", {}, "Webhook endpoints"),
        h("p", { class: "muted" }, who ? ["Endpoints of ", h("code", {}, who)] : "Every endpoint of the account")),
      h("button", { type: "button", class: "button button-quiet", onclick: signOut }, "Sign out")),
    state.secret ? secretOnce("Signing secret", state.secret.value,
      `The secret of ${state.secret.url}: it verifies the signature of every delivery. Copy it now, it is not shown again.`) : null,
    endpoints(),
    state.deliveries ? deliveries() : null,
    addForm());
}

function endpoints() {
  if (!state.subscriptions.length) {
    return h("section", { class: "card", "aria-labelledby": "endpoints" },
      h("h2", { id: "endpoints" }, "Your endpoints"),
      h("p", { class: "empty" }, "No endpoint yet: add one below."));
  }
  return h("section", { class: "card", "aria-labelledby": "endpoints" },
    h("h2", { id: "endpoints" }, "Your endpoints"),
    h("table", { class: "table table-compact" },
      h("thead", {}, h("tr", {}, ["Endpoint", "Event types", "State", "Actions"].map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, state.subscriptions.map(row))));
}

function row(subscription) {
  const id = subscription[Subscription.id];
  const url = subscription[Subscription.url];
  const status = subscription[Subscription.state];
  const description = subscription[Subscription.description];
  const path = `/portal/subscriptions/${encodeURIComponent(id)}`;
  const on = status !== "disabled";
  return h("tr", { "data-subscription": id },
    h("td", { class: "target" }, h("code", {}, url), description ? h("span", { class: "sub muted" }, description) : null),
    h("td", {}, subscription[Subscription.eventTypes].join(", ")),
    h("td", {}, badge(status)),
    h("td", {}, h("div", { class: "actions" },
      button("Send test", () => act(async () => {
        const outcome = await api("POST", `${path}/test`, {});
        const ok = outcome[TestDelivery.ok];
        toast(ok ? `Test delivered: HTTP ${outcome[TestDelivery.statusCode]}.` : `Test failed: ${outcome[TestDelivery.error]}`, ok ? "info" : "error");
      })),
      button(on ? "Disable" : "Enable", () => act(() => api("POST", `${path}/${on ? "disable" : "enable"}`), on ? "Endpoint disabled." : "Endpoint enabled.")),
      button("Rotate secret", () => act(async () => {
        const rotated = await api("POST", `${path}/secret/rotate`);
        state.secret = { url, value: rotated[NewSubscription.secret] };
      }, "New secret made; the previous one keeps signing for a while.")),
      button("Deliveries", () => act(async () => {
        const page = await api("GET", `${path}/deliveries?limit=20`);
        state.deliveries = { url, jobs: page[JobPage.data] };
      })),
      button("Delete", () => {
        if (!confirm(`Delete the endpoint ${url}? It receives nothing more.`)) return;
        act(async () => {
          await api("DELETE", path);
          if (state.deliveries?.url === url) state.deliveries = null;
        }, "Endpoint deleted.");
      }, "button-danger"))));
}

function button(label, onclick, kind = "") {
  return h("button", { type: "button", class: `button button-small ${kind}`, onclick }, label);
}

function deliveries() {
  const { url, jobs } = state.deliveries;
  return h("section", { class: "card deliveries", "aria-labelledby": "deliveries" },
    h("h2", { id: "deliveries" }, "Recent deliveries to ", h("code", {}, url)),
    jobs.length
      ? h("table", { class: "table table-compact" },
        h("thead", {}, h("tr", {}, ["Sent", "Status", "Attempts", "Error"].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, jobs.map((job) => h("tr", {},
          h("td", {}, when(job[ListedJob.createdAt])),
          h("td", {}, badge(job[ListedJob.status])),
          h("td", {}, `${job[ListedJob.attempts]} of ${job[ListedJob.maxAttempts]}`),
          h("td", { class: "error-text" }, job[ListedJob.errorMessage] || "")))))
      : h("p", { class: "empty" }, "No delivery yet."));
}

function addForm() {
  const url = h("input", { type: "url", name: "url", required: true, placeholder: "https://example.com/webhooks", autocomplete: "off" });
  const description = h("input", { type: "text", name: "description", maxlength: 200 });
  const boxes = state.catalog.map((type) => {
    const name = type[PortalEventType.name];
    const about = type[PortalEventType.description];
    return h("label", { class: "check" },
      h("input", { type: "checkbox", name: "eventTypes", value: name }),
      h("span", {}, h("code", {}, name), about ? ` — ${about}` : "", type[PortalEventType.deprecated] ? " (deprecated)" : ""));
  });
  const submit = async (event) => {
    event.preventDefault();
    const eventTypes = boxes.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
    if (!eventTypes.length) return toast("Choose at least one event type.", "error");
    const body = { [SubscriptionBody.url]: url.value.trim(), [SubscriptionBody.eventTypes]: eventTypes };
    if (description.value.trim()) body[SubscriptionBody.description] = description.value.trim();
    await act(async () => {
      const created = await api("POST", "/portal/subscriptions", body);
      state.secret = { url: created[NewSubscription.url], value: created[NewSubscription.secret] };
    }, "Endpoint added.");
  };
  return h("section", { class: "card", "aria-labelledby": "add" },
    h("h2", { id: "add" }, "Add an endpoint"),
    h("form", { onsubmit: submit },
      field("URL", url, "An https address on the public internet; it receives a signed POST for each event."),
      field("Description (optional)", description),
      h("fieldset", { class: "scopes" },
        h("legend", {}, "Event types"),
        boxes.length ? h("div", { class: "field event-types" }, boxes) : h("p", { class: "muted" }, "No event type is offered yet.")),
      h("button", { type: "submit", class: "button button-primary", disabled: !boxes.length }, "Add endpoint")));
}

async function signOut() {
  try {
    await api("DELETE", "/portal/session");
  } finally {
    replace(main, h("section", { class: "card" }, h("h1", {}, "Signed out"), h("p", {}, "Open a new portal link to come back.")));
  }
}

start();
