// The venue's accounts: balances per asset (free and locked by open orders) and the account's own
// flags as GET /api/v3/account shows them. Every API key acts for one account.

export interface Balance {
  free: bigint
  locked: bigint
}

export interface Account {
  name: string
  balances: Map<string, Balance>
  canTrade: boolean
  canWithdraw: boolean
  canDeposit: boolean
  updateTime: number
}

export class Accounts {
  private readonly accounts = new Map<string, Account>()

  constructor(protected readonly now: () => number) {}

  /** The account, opened empty on first use. */
  account(name: string): Account {
    const account = this.accounts.get(name) ?? { name, balances: new Map(), canTrade: true, canWithdraw: false, canDeposit: true, updateTime: this.now() }
    this.accounts.set(name, account)
    return account
  }

  balance(account: string, asset: string): Balance {
    const balances = this.account(account).balances
    const balance = balances.get(asset) ?? { free: 0n, locked: 0n }
    balances.set(asset, balance)
    return balance
  }
}
