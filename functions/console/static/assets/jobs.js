// Jobs, newest first, filtered, with the recovery of failed ones. Every value is the tenant's or a
// recipient's text: shown with textContent only (dom.js).
import { api } from "./api.js";
import { badge, field, h, toast, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import { JobPage, JobSummary, Pagination, RecoverRequest, Recovery } from "./fields.js";

const LIMIT = 20;

export async function jobsPage() {
  const query = new URLSearchParams(location.search);
  const filters = { type: query.get("type") || "", status: query.get("status") || "", day: query.get("day") || "" };
  const page = Number(query.get("page") || 1);
  const parameters = new URLSearchParams({ limit: String(LIMIT), page: String(page) });
  for (const [name, value] of Object.entries(filters)) if (value) parameters.set(name, value);
  const listing = await api("GET", `/notifications/jobs?${parameters}`);
  const pagination = listing[JobPage.pagination];
  const jobs = listing[JobPage.data];
  const total = pagination[Pagination.total];
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Jobs"),
      h("p", { class: "muted" }, `${total}${pagination[Pagination.totalIsLowerBound] ? "+" : ""} job${total === 1 ? "" : "s"}`)),
    filterForm(filters),
    filters.status === "failed" ? recoverForm(filters.type) : null,
    jobs.length ? jobTable(jobs) : h("p", { class: "empty" }, "No jobs match these filters yet. Send one with the API and it appears here."),
    pager(page, pagination[Pagination.totalPages], filters));
}

function select(name, options, value) {
  return h("select", { name }, options.map(([optionValue, label]) =>
    h("option", { value: optionValue, selected: optionValue === value }, label)));
}

function filterForm(filters) {
  const type = select("type", [["", "Any type"], ["email", "Email"], ["webhook", "Webhook"]], filters.type);
  const status = select("status", [["", "Any status"], ["scheduled", "Scheduled"], ["pending", "Pending"],
    ["processing", "Processing"], ["completed", "Completed"], ["failed", "Failed"], ["cancelled", "Cancelled"]], filters.status);
  const dayInput = h("input", { type: "date", name: "day", value: filters.day });
  return h("form", {
    class: "filters",
    role: "search",
    "aria-label": "Filter jobs",
    onsubmit: (event) => {
      event.preventDefault();
      const chosen = new URLSearchParams();
      for (const input of [type, status, dayInput]) if (input.value) chosen.set(input.name, input.value);
      go(`/console/jobs${chosen.size ? `?${chosen}` : ""}`);
    },
  }, field("Type", type), field("Status", status), field("Accepted on (UTC)", dayInput),
  h("button", { type: "submit", class: "button" }, "Apply"),
  h("a", { href: "/console/jobs", "data-route": "", class: "button button-quiet" }, "Clear"));
}

// Re-queue every failed job accepted since a time, as POST /notifications/jobs/recover does (up to
// 1 000 a call: the form follows nextCursor until all are queued).
function recoverForm(type) {
  const since = h("input", { type: "datetime-local", name: "since", required: true, value: localInput(new Date(Date.now() - 24 * 3600 * 1000)) });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Re-queue failed jobs");
  return h("form", {
    class: "card recover",
    "aria-label": "Recover failed jobs",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const body = { [RecoverRequest.since]: new Date(since.value).toISOString(), ...(type ? { [RecoverRequest.type]: type } : {}) };
      let requeued = 0;
      let cursor;
      do {
        const result = await act(() => api("POST", "/notifications/jobs/recover", cursor ? { ...body, [RecoverRequest.cursor]: cursor } : body));
        if (!result) {
          submit.disabled = false;
          return;
        }
        requeued += result[Recovery.requeued];
        cursor = result[Recovery.nextCursor];
      } while (cursor);
      toast(`${requeued} failed job${requeued === 1 ? "" : "s"} re-queued`, "success");
      rerender();
    },
  }, h("h2", {}, "Recover"),
  h("p", { class: "muted" }, "Queue the failed jobs again once what failed them is fixed. Their attempts go on counting; nothing is charged again."),
  field("Failed jobs accepted since", since), submit);
}

function localInput(moment) {
  const local = new Date(moment.getTime() - moment.getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 16);
}

function jobTable(jobs) {
  return h("table", { class: "table" },
    h("thead", {}, h("tr", {}, ["Job", "Type", "Status", "Attempts", "Accepted", "Last error"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, jobs.map((job) => h("tr", {},
      h("td", {}, link(`/console/jobs/${encodeURIComponent(job[JobSummary.id])}`, h("code", {}, job[JobSummary.id].slice(0, 8)), h("span", { class: "visually-hidden" }, ` job ${job[JobSummary.id]}`))),
      h("td", {}, job[JobSummary.type]),
      h("td", {}, badge(job[JobSummary.status])),
      h("td", {}, `${job[JobSummary.attempts]} / ${job[JobSummary.maxAttempts]}`),
      h("td", {}, when(job[JobSummary.createdAt])),
      h("td", { class: "error-text" }, job[JobSummary.errorMessage] || "")))));
}

function pager(page, pages, filters) {
  const at = (number) => {
    const query = new URLSearchParams({ ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)), page: String(number) });
    return `/console/jobs?${query}`;
  };
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? link(at(page - 1), "← Newer") : h("span", {}),
    h("span", { class: "muted" }, `Page ${page} of ${Math.max(1, pages)}`),
    page < pages ? link(at(page + 1), "Older →") : h("span", {}));
}
