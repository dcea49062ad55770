/** The paging members of every listing's answer (api/pagination.ts makes them). */
export interface Paging {
  prev_url: string | null;
  next_url: string | null;
  total_page: number;
}

/** An answer without its paging members: what a client has once it merged the pages. */
export type Unpaged<T extends Paging> = Omit<T, keyof Paging>;
