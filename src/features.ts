// Modules that hook into shared flows (price listeners, event listeners) register here on import,
// so the server and every CLI command that changes state run the same consequences.
export {}
import './webhooks/outbox.ts'
import './trading/paper-broker.ts'
import './trading/automation.ts'
