// The console's views, in the order of the navigation: each module exports { id, title, render },
// where render(ctx) resolves to the view's content (ctx: api, session, canChange, rerender,
// showProblem; see app.js). A view is added here and nowhere else.
import { overview } from './view-overview.js'
import { signals } from './view-signals.js'
import { orders } from './view-orders.js'
import { risk } from './view-risk.js'
import { incidents } from './view-incidents.js'
import { models } from './view-models.js'
import { keys } from './view-keys.js'
import { webhooks } from './view-webhooks.js'
import { venue } from './view-venue.js'
import { gateway } from './view-gateway.js'
import { alerts } from './view-alerts.js'

export const VIEWS = [overview, signals, orders, risk, incidents, models, keys, webhooks, venue, gateway, alerts]
