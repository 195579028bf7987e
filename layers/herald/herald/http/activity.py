"""The JSON view of a tenant's activity by day (GET /api/v1/account/activity)."""

from __future__ import annotations

from typing import Any

from herald.domain.jobs import JobStatus
from herald.services.activity import Activity


def activity_document(activity: Activity) -> dict[str, Any]:
    days = activity.days
    return {
        "from": days[0].day.isoformat(),
        "to": days[-1].day.isoformat(),
        "totals": {
            "accepted": activity.total(None),
            "completed": activity.total(JobStatus.COMPLETED),
            "failed": activity.total(JobStatus.FAILED),
        },
        "successRate": activity.success_rate,
        "days": [
            {
                "day": day.day.isoformat(),
                "accepted": day.count(None, None),
                "completed": day.count(JobStatus.COMPLETED, None),
                "failed": day.count(JobStatus.FAILED, None),
            }
            for day in days
        ],
    }
