// The seat tokens this tab holds, one per match.
//
// A seat token is a secret bearer token, shown once when the seat is joined. /play keeps it in
// sessionStorage (this tab only, gone when the tab closes) and never puts it in a URL: a shared link
// (`/play/#/match/<id>`) carries only the match id, so whoever opens it watches, or joins a free seat.

const key = (matchId) => `grimoire.seat.${matchId}`;

/** The seat this tab holds in `matchId`: {seat, token}, or null (then the page is a spectator). */
export function heldSeat(matchId) {
  const stored = sessionStorage.getItem(key(matchId));
  return stored ? JSON.parse(stored) : null;
}

export function keepSeat(matchId, seat, token) {
  sessionStorage.setItem(key(matchId), JSON.stringify({ seat, token }));
}

/** Forget the seat: its token was refused (the seat was left or handed to a bot). */
export function forgetSeat(matchId) {
  sessionStorage.removeItem(key(matchId));
}
