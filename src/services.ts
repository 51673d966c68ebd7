// Every background service registers itself on import; serve starts them all.
export {}
