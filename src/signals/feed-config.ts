// Whether the public feed (GET /api/v1/public/signals and the page at /) is served. `serve
// --no-public-feed` turns it off before the server starts; both routes then answer 404.
export const publicFeed = { enabled: true }
