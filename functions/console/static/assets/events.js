// Events: the account's recent events, newest first, and one event's fan-out: its payload and one
// row per subscription it went to (the delivery job's status, attempts, last error, the endpoint's
// answer), the rows still moving refreshed while the tab is visible. Payloads, URLs and errors are
// the tenant's or a receiver's text: textContent only.
import { api } from "./api.js";
import { badge, h, replace, when } from "./dom.js";
import { link } from "./app.js";
import { attempts } from "./jobs.js";
import { EventDelivery, EventDocument, EventPage, EventSummary } from "./fields.js";

// Deliveries still moving (null: the fan-out has not written the job yet): the page reads the
// event again this often while one is shown.
const IN_FLIGHT = new Set([null, "scheduled", "pending", "processing"]);
const POLL_MS = 3000;

// A short id that links to the page; its accessible name is the whole id (an aria-label, not hidden
// text: hidden text in a table's last column would widen a phone's page beyond its scrolling box).
function idLink(path, id, what, shown = 8) {
  return h("a", { href: path, "data-route": "", "aria-label": `${what} ${id}` }, h("code", {}, id.slice(0, shown)));
}

export const jobLink = (jobId) => idLink(`/console/jobs/${encodeURIComponent(jobId)}`, jobId, "Job");

// "← first" and "next →" over a cursor kept in the page's own address (?cursor=).
export function cursorPager(path, cursor, next, [first, later]) {
  const at = (value) => (value ? `${path}?${new URLSearchParams({ cursor: value })}` : path);
  if (!cursor && !next) return null;
  return h("nav", { class: "pager", "aria-label": "Pages" },
    cursor ? link(at(""), first) : h("span", {}),
    next ? link(at(next), later) : h("span", {}));
}

export function deliveryStatus(status) {
  return status === null ? h("span", { class: "muted" }, "not queued yet") : badge(status);
}

export async function eventsPage() {
  const cursor = new URLSearchParams(location.search).get("cursor") || "";
  const page = await api("GET", `/events${cursor ? `?${new URLSearchParams({ cursor })}` : ""}`);
  const events = page[EventPage.data];
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Events"),
      h("p", { class: "muted" }, "What the account sent with POST /api/v1/events, newest first, and how many subscriptions each went to.")),
    events.length ? eventTable(events) : h("p", { class: "empty" }, cursor ? "No older event." : "No event sent yet."),
    cursorPager("/console/events", cursor, page[EventPage.nextCursor], ["← Newest", "Older →"]));
}

function eventTable(events) {
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "Events, newest first"),
    h("thead", {}, h("tr", {}, ["Event", "Type", "Channels", "Subscriptions", "Accepted"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, events.map((event) => h("tr", { "data-event": event[EventSummary.id] },
      h("td", {}, idLink(`/console/events/${encodeURIComponent(event[EventSummary.id])}`, event[EventSummary.id], "Event", 12)),
      h("td", {}, h("code", {}, event[EventSummary.type])),
      h("td", { class: "target" }, event[EventSummary.channels].join(", ") || "—"),
      h("td", {}, String(event[EventSummary.subscriptions])),
      h("td", {}, when(event[EventSummary.createdAt]))))));
}

export async function eventPage(id) {
  const cursor = new URLSearchParams(location.search).get("cursor") || "";
  const path = `/console/events/${encodeURIComponent(id)}`;
  const read = () => api("GET", `/events/${encodeURIComponent(id)}${cursor ? `?${new URLSearchParams({ cursor })}` : ""}`);
  const event = await read();
  const count = event[EventDocument.subscriptions];
  const fanout = h("div", { "aria-live": "polite" });
  const show = (shown) => {
    const deliveries = shown[EventDocument.deliveries];
    replace(fanout,
      deliveries.length ? fanoutTable(deliveries) : h("p", { class: "empty" }, "No subscription received this event."),
      cursorPager(path, cursor, shown[EventDocument.nextCursor], ["← First deliveries", "Next deliveries →"]));
    return deliveries.some((delivery) => IN_FLIGHT.has(delivery[EventDelivery.status]));
  };
  const page = h("div", {},
    h("p", { class: "crumbs" }, link("/console/events", "Events"), " / ", h("code", {}, event[EventDocument.id])),
    h("header", { class: "page-head" }, h("h1", {}, h("code", {}, event[EventDocument.type])),
      h("p", { class: "muted" }, `Accepted ${when(event[EventDocument.createdAt])}`,
        event[EventDocument.channels].length ? ` · channels ${event[EventDocument.channels].join(", ")}` : "",
        ` · ${count} subscription${count === 1 ? "" : "s"}`)),
    h("section", { class: "card", "aria-labelledby": "fanout-title" }, h("h2", { id: "fanout-title" }, "Deliveries"), fanout),
    h("section", { class: "card", "aria-labelledby": "payload-title" },
      h("h2", { id: "payload-title" }, "Payload"),
      h("pre", { class: "payload", "data-payload": "" }, JSON.stringify(event[EventDocument.payload], null, 2))));
  if (show(event)) follow(page, async () => show(await read()));
  return page;
}

function fanoutTable(deliveries) {
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "One delivery per subscription"),
    h("thead", {}, h("tr", {}, ["Subscription", "Status", "Attempts", "Last error", "Response", "Completed", "Job"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, deliveries.map((delivery) => h("tr", { "data-subscription": delivery[EventDelivery.subscriptionId] },
      h("td", { class: "target url-cell" }, link(`/console/subscriptions/${encodeURIComponent(delivery[EventDelivery.subscriptionId])}`, delivery[EventDelivery.url])),
      h("td", { "data-status": "" }, deliveryStatus(delivery[EventDelivery.status])),
      h("td", {}, attempts(delivery[EventDelivery.attempts])),
      h("td", { class: "error-text" }, delivery[EventDelivery.lastError] || ""),
      h("td", {}, delivery[EventDelivery.responseStatus] === null ? "—" : `HTTP ${delivery[EventDelivery.responseStatus]}`),
      h("td", {}, when(delivery[EventDelivery.completedAt])),
      h("td", {}, jobLink(delivery[EventDelivery.jobId]))))));
}

// While a delivery is still moving, its rows are read again after a pause (not while the tab is
// hidden, nor once the person went elsewhere); ``refresh`` answers whether one still is.
function follow(page, refresh) {
  const address = location.href;
  const tick = async () => {
    if (!page.isConnected || location.href !== address) return;
    let moving = true;
    if (document.visibilityState === "visible") {
      try {
        moving = await refresh();
      } catch {
        return; // the next visit shows the error; a background refresh stays quiet
      }
    }
    if (moving) setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
}
