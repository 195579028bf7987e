// Subscriptions: the endpoints registered for the account's events (URL, event types, channels,
// state from the subscription's own breaker), a new one with its signing secret shown once, and one
// subscription's page: its state, Test, Rotate secret (shown once), Disable / Enable, Delete and its
// last deliveries. URLs, descriptions, errors and answers are the tenant's or a receiver's text:
// textContent only.
import { api } from "./api.js";
import { badge, facts, field, h, replace, secretOnce, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import { may, refusal } from "./access.js";
import { attempts } from "./jobs.js";
import { cursorPager, jobLink } from "./events.js";
import { typePath } from "./eventtypes.js";
import {
  EventType, JobPage, ListedJob, NewSubscription, Pagination, Subscription, SubscriptionBody, SubscriptionBreaker, TestDelivery, TestRequest,
} from "./fields.js";

const ONCE = "Shown this once: you will not see it again. Copy it now into the receiver's configuration; it verifies the signatures of this subscription's deliveries.";

const pagePath = (id) => `/console/subscriptions/${encodeURIComponent(id)}`;
const apiPath = (id) => `/subscriptions/${encodeURIComponent(id)}`;
const commaList = (text) => text.split(/[\s,]+/).filter(Boolean);

export async function subscriptionsPage() {
  const [subscriptions, types] = await Promise.all([api("GET", "/subscriptions"), api("GET", "/event-types")]);
  const revealed = h("div", { "aria-live": "polite" });
  const list = h("div", {});
  replace(list, subscriptionTable(subscriptions));
  const created = async (subscription) => {
    replace(list, subscriptionTable(await api("GET", "/subscriptions")));
    replace(revealed, secretOnce(`The signing secret of ${subscription[NewSubscription.url]}`, subscription[NewSubscription.secret], ONCE));
    revealed.querySelector("button")?.focus();
  };
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Subscriptions"),
      h("p", { class: "muted" }, "The endpoints that receive the account's events, each with its own signing secret, rate and breaker.")),
    revealed,
    list,
    newSubscriptionCard(types, created));
}

function subscriptionTable(subscriptions) {
  if (!subscriptions.length) return h("p", { class: "empty" }, "No subscription yet.");
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "Subscriptions"),
    h("thead", {}, h("tr", {}, ["Endpoint", "State", "Event types", "Channels", "Subscriber"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, subscriptions.map((subscription) => h("tr", { "data-subscription": subscription[Subscription.id] },
      h("td", { class: "target url-cell" }, link(pagePath(subscription[Subscription.id]), subscription[Subscription.url]),
        subscription[Subscription.description] ? h("span", { class: "muted sub" }, subscription[Subscription.description]) : null),
      h("td", { "data-state": subscription[Subscription.state] }, stateCell(subscription)),
      h("td", { class: "target" }, typeList(subscription[Subscription.eventTypes])),
      h("td", { class: "target" }, subscription[Subscription.channels].join(", ") || "every channel"),
      h("td", { class: "target" }, subscription[Subscription.subscriberId] || "—")))));
}

function typeList(names) {
  return h("span", { class: "actions" }, names.map((name) => h("code", {}, name)));
}

function stateCell(subscription) {
  const breaker = subscription[Subscription.breaker];
  const since = breaker[SubscriptionBreaker.openedAt];
  const error = breaker[SubscriptionBreaker.lastError];
  return [badge(subscription[Subscription.state]),
    subscription[Subscription.state] !== "enabled" && since ? h("span", { class: "muted sub" }, `since ${when(since)}`) : null,
    error ? h("span", { class: "error-text sub" }, error) : null];
}

function newSubscriptionCard(types, created) {
  const section = (...children) => h("section", { class: "card", "aria-labelledby": "new-subscription" },
    h("h2", { id: "new-subscription" }, "New subscription"), ...children);
  if (!may("webhooks")) return section(h("p", { class: "muted", "data-refused": "" }, refusal("webhooks")));
  if (!types.length) {
    return section(h("p", { class: "muted" }, "A subscription receives event types of the account's catalog: ",
      link("/console/event-types", "create an event type"), " first."));
  }
  const url = h("input", { name: "url", type: "url", required: true, maxlength: "2048", autocomplete: "off", placeholder: "https://hooks.example.com/orders" });
  const boxes = types.map((type) => h("label", { class: "check" },
    h("input", { type: "checkbox", name: "eventTypes", value: type[EventType.name] }),
    h("span", {}, h("code", {}, type[EventType.name]), type[EventType.deprecated] ? " (deprecated)" : "",
      type[EventType.description] ? ` — ${type[EventType.description]}` : "")));
  const channels = h("input", { name: "channels", autocomplete: "off", placeholder: "eu, cust_42" });
  const rate = h("input", { name: "rate", type: "number", min: "1", max: "1000", step: "1", inputmode: "numeric" });
  const description = h("input", { name: "description", maxlength: "200", autocomplete: "off" });
  const subscriber = h("input", { name: "subscriber", maxlength: "128", autocomplete: "off", placeholder: "cust_42" });
  const problem = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Create subscription");
  const form = h("form", {
    "aria-label": "New subscription",
    onsubmit: async (event) => {
      event.preventDefault();
      const chosen = boxes.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
      if (!chosen.length) {
        replace(problem, h("p", { class: "form-error", role: "alert" }, "Choose at least one event type."));
        return;
      }
      const body = { [SubscriptionBody.url]: url.value.trim(), [SubscriptionBody.eventTypes]: chosen };
      const listed = commaList(channels.value);
      if (listed.length) body[SubscriptionBody.channels] = listed;
      if (rate.value) body[SubscriptionBody.rateLimitPerSecond] = Number(rate.value);
      if (description.value.trim()) body[SubscriptionBody.description] = description.value.trim();
      if (subscriber.value.trim()) body[SubscriptionBody.subscriberId] = subscriber.value.trim();
      submit.disabled = true;
      const made = await act(() => api("POST", "/subscriptions", body), "Subscription created", problem);
      submit.disabled = false;
      if (!made) return;
      form.reset();
      await created(made);
    },
  },
  field("URL", url, "https:// on a public host; checked now and at every delivery"),
  h("fieldset", { class: "field scopes" }, h("legend", {}, "Event types"), boxes),
  h("div", { class: "form-grid form-grid-top" },
    field("Channels (optional)", channels, "Separated by commas; empty: events of every channel"),
    field("Rate limit (optional)", rate, "Deliveries per second at most, 1 to 1000"),
    field("Description (optional)", description),
    field("Subscriber id (optional)", subscriber, "Your id of the customer who owns the endpoint")),
  problem,
  submit);
  return section(form);
}

export async function subscriptionPage(id) {
  const cursor = new URLSearchParams(location.search).get("cursor") || "";
  const [subscription, history] = await Promise.all([
    api("GET", apiPath(id)),
    api("GET", `${apiPath(id)}/deliveries${cursor ? `?${new URLSearchParams({ cursor })}` : ""}`),
  ]);
  const revealed = h("div", { "aria-live": "polite" });
  return h("div", {},
    h("p", { class: "crumbs" }, link("/console/subscriptions", "Subscriptions"), " / ", h("code", {}, subscription[Subscription.id])),
    h("header", { class: "page-head" },
      h("h1", {}, "Subscription", " ", h("span", { "data-state": subscription[Subscription.state] }, badge(subscription[Subscription.state])))),
    h("p", { class: `status-detail status-detail-${subscription[Subscription.state]}`, "data-state-detail": "" },
      stateSentence(subscription)),
    revealed,
    h("div", { class: "columns" },
      h("section", { class: "card", "aria-labelledby": "subscription-facts" },
        h("h2", { id: "subscription-facts" }, "Endpoint"),
        facts([
          ["URL", h("code", { "data-url": "" }, subscription[Subscription.url])],
          ["Id", h("code", {}, subscription[Subscription.id])],
          ["Event types", h("span", { class: "actions" }, subscription[Subscription.eventTypes].map((name) => link(typePath(name), h("code", {}, name))))],
          ["Channels", subscription[Subscription.channels].join(", ") || "every channel"],
          ["Rate limit", subscription[Subscription.rateLimitPerSecond] ? `${subscription[Subscription.rateLimitPerSecond]} a second` : "none of its own"],
          ["Description", subscription[Subscription.description]],
          ["Subscriber", subscription[Subscription.subscriberId]],
          ["Custom headers", Object.keys(subscription[Subscription.headers]).join(", ")],
          ["Created", when(subscription[Subscription.createdAt])],
          ["Updated", when(subscription[Subscription.updatedAt])],
        ])),
      may("webhooks") ? actionsCard(subscription, revealed)
        : h("section", { class: "card", "aria-labelledby": "subscription-actions" },
          h("h2", { id: "subscription-actions" }, "Actions"), h("p", { class: "muted", "data-refused": "" }, refusal("webhooks")))),
    deliveriesCard(subscription, history, cursor));
}

function stateSentence(subscription) {
  const breaker = subscription[Subscription.breaker];
  const failures = breaker[SubscriptionBreaker.consecutiveFailures];
  const error = breaker[SubscriptionBreaker.lastError];
  const last = error ? ` Last error: ${error}` : "";
  switch (subscription[Subscription.state]) {
    case "open":
      return `Failing: its breaker opened ${when(breaker[SubscriptionBreaker.openedAt])} after ${failures} failure${failures === 1 ? "" : "s"}; its deliveries wait, without spending attempts, until about ${when(breaker[SubscriptionBreaker.openUntil])}.${last}`;
    case "disabled":
      return `Disabled${breaker[SubscriptionBreaker.openedAt] ? ` since ${when(breaker[SubscriptionBreaker.openedAt])}` : ""}: its deliveries fail at once until it is enabled.${last}`;
    default:
      return `Enabled: every event of its types is delivered to it.${last}`;
  }
}

function actionsCard(subscription, revealed) {
  const id = subscription[Subscription.id];
  const state = subscription[Subscription.state];
  const outcome = h("div", { class: "test-outcome", "aria-live": "polite", "data-test-outcome": "" });
  const button = (label, onclick, kind = "") => h("button", { type: "button", class: `button ${kind}`.trim(), onclick }, label);
  const post = (suffix, done) => async () => {
    if (await act(() => api("POST", `${apiPath(id)}/${suffix}`), done)) rerender();
  };
  return h("section", { class: "card", "aria-labelledby": "subscription-actions" },
    h("h2", { id: "subscription-actions" }, "Actions"),
    testForm(subscription, outcome),
    outcome,
    h("div", { class: "actions" },
      button("Rotate secret", async () => {
        const rotated = await act(() => api("POST", `${apiPath(id)}/secret/rotate`), "New signing secret issued");
        if (!rotated) return;
        const until = rotated[NewSubscription.previousValidUntil];
        const note = until ? ` The previous secret keeps signing beside it until ${when(until)}.` : "";
        replace(revealed, secretOnce("The new signing secret", rotated[NewSubscription.secret], `${ONCE}${note}`));
        revealed.querySelector("button")?.focus();
      }),
      state === "disabled"
        ? button("Enable", post("enable", "Enabled: its deliveries go out again"), "button-primary")
        : button("Disable", async () => {
          if (!confirm("Disable this subscription? Its deliveries fail at once until you enable it again.")) return;
          await post("disable", "Disabled: its deliveries fail until you enable it")();
        }, "button-danger"),
      state === "open" ? button("Enable", post("enable", "Enabled with a clean record"), "button-primary") : null,
      button("Delete", async () => {
        if (!confirm(`Delete the subscription to ${subscription[Subscription.url]}? It receives no more events; this cannot be undone.`)) return;
        if (await act(() => api("DELETE", apiPath(id)), "Subscription deleted")) go("/console/subscriptions");
      }, "button-danger")));
}

// Sends one example event now (the first of the type's schema examples) and shows what came back.
function testForm(subscription, outcome) {
  const types = subscription[Subscription.eventTypes];
  const chooser = h("select", { name: "eventType" }, types.map((name) => h("option", { value: name }, name)));
  const submit = h("button", { type: "submit", class: "button" }, "Send a test event");
  return h("form", {
    class: "inline-form",
    "aria-label": "Test the subscription",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      replace(outcome, h("p", { class: "muted" }, "Sending…"));
      const tried = await act(() => api("POST", `${apiPath(subscription[Subscription.id])}/test`, { [TestRequest.eventType]: chooser.value }), null, outcome);
      submit.disabled = false;
      if (tried) replace(outcome, testOutcome(tried));
    },
  }, types.length > 1 ? field("Event type", chooser) : null, submit);
}

function testOutcome(tried) {
  const status = tried[TestDelivery.statusCode];
  const latency = tried[TestDelivery.latencyMs];
  const answered = status === null ? "" : `HTTP ${status}${latency === null ? "" : ` in ${latency} ms`}`;
  const sentence = tried[TestDelivery.ok]
    ? `Delivered: the endpoint answered ${answered}.`
    : `Not delivered${answered ? ` (${answered})` : ""}: ${tried[TestDelivery.error] || "the endpoint did not answer 2xx."}`;
  const excerpt = tried[TestDelivery.responseExcerpt];
  return h("div", { "data-ok": String(tried[TestDelivery.ok]) },
    h("p", { class: `message ${tried[TestDelivery.ok] ? "message-success" : "message-error"}` }, sentence),
    h("p", { class: "muted" }, "Test event ", h("code", {}, tried[TestDelivery.eventId]), ` of type ${tried[TestDelivery.eventType]}.`),
    excerpt ? h("details", {}, h("summary", {}, "The answer's body"), h("pre", { class: "code" }, excerpt)) : null);
}

function deliveriesCard(subscription, history, cursor) {
  const jobs = history[JobPage.data];
  return h("section", { class: "card", "aria-labelledby": "deliveries-title" },
    h("h2", { id: "deliveries-title" }, "Last deliveries"),
    jobs.length
      ? h("table", { class: "table" },
        h("caption", { class: "visually-hidden" }, "The subscription's deliveries, newest first"),
        h("thead", {}, h("tr", {}, ["Job", "Status", "Attempts", "Accepted", "Completed", "Last error"].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, jobs.map((job) => h("tr", { "data-job": job[ListedJob.id] },
          h("td", {}, jobLink(job[ListedJob.id])),
          h("td", {}, badge(job[ListedJob.status])),
          h("td", {}, attempts(job[ListedJob.attempts])),
          h("td", {}, when(job[ListedJob.createdAt])),
          h("td", {}, when(job[ListedJob.completedAt])),
          h("td", { class: "error-text" }, job[ListedJob.errorMessage] || "")))))
      : h("p", { class: "empty" }, cursor ? "No older delivery." : "No delivery yet: events of its types will show here."),
    cursorPager(pagePath(subscription[Subscription.id]), cursor, history[JobPage.pagination][Pagination.nextCursor], ["← Newest", "Older →"]));
}
