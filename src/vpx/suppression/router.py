"""/api/v1/suppressions/feed: the contacts the calling account revealed that were suppressed since,
so that it can delete its own copies."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from vpx.auth.dependencies import ReadCaller
from vpx.db import ReadSession
from vpx.errors import problem_responses
from vpx.suppression import feed
from vpx.suppression.schemas import SuppressionFeed, SuppressionFeedParams

router = APIRouter(prefix="/api/v1/suppressions", tags=["suppressions"])


@router.get(
    "/feed",
    response_model=SuppressionFeed,
    responses=problem_responses(401, 403, 422, 429),
    summary="Suppressed contacts you revealed",
)
async def suppression_feed(
    params: Annotated[SuppressionFeedParams, Query()], caller: ReadCaller, session: ReadSession
) -> SuppressionFeed:
    """Contacts this account revealed that were later put on the suppression list (an opt-out,
    do-not-contact, regulated data, or an unsubscribe where the operator applies it to every account):
    delete your copies. Newest first, with an opaque cursor; any key type may read it. Each item holds
    the contact id, the reason as a class and when it was suppressed; the same arrives as a
    `contact.suppressed` webhook event."""
    # Read from the primary: the account's own notices, written a moment ago, must show.
    return await feed.feed_page(session, account_id=caller.account_id, limit=params.limit, cursor=params.cursor)
