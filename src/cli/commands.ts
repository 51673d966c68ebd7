// Every subcommand, in the order --help lists them.
import type { CliCommand } from './command.ts'
import { serve } from './serve.ts'
import { tenantCreate } from './tenant.ts'
import { userCreate } from './user.ts'
import { tokenCreate } from './token.ts'
import { pricesFetch, pricesImport } from './prices.ts'
import { venueConnect, venueDisconnect, venueShow } from './venue.ts'
import { gatewayKeyCreate, gatewayKeyList, gatewayKeyRevoke } from './gateway.ts'
import { backup } from './backup.ts'
import { storeAdoptSecrets, storeCopy } from './store.ts'
import { publishCommand } from './publish.ts'
import { killSwitchCommand, resumeCommand } from './kill-switch.ts'
import { incidentsVerify } from './incidents.ts'
import { signalsVerify } from './signals.ts'
import { riskShow } from './risk.ts'

export const COMMANDS: CliCommand[] = [
  serve,
  tenantCreate,
  userCreate,
  tokenCreate,
  pricesImport,
  pricesFetch,
  venueConnect,
  venueShow,
  venueDisconnect,
  gatewayKeyCreate,
  gatewayKeyList,
  gatewayKeyRevoke,
  publishCommand,
  killSwitchCommand,
  resumeCommand,
  riskShow,
  incidentsVerify,
  signalsVerify,
  backup,
  storeAdoptSecrets,
  storeCopy,
]
