// Lets the overlay answer many reads at once while each write, rename, delete or accept runs
// alone, so a reader never sees an entry half-updated. First come, first served.

interface Waiter {
  exclusive: boolean;
  grant: () => void;
}

export class ReadWriteLock {
  private readers = 0;
  private writing = false;
  private readonly queue: Waiter[] = [];

  shared<T>(work: () => Promise<T>): Promise<T> {
    return this.run(false, work);
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.run(true, work);
  }

  private async run<T>(exclusive: boolean, work: () => Promise<T>): Promise<T> {
    await new Promise<void>((grant) => {
      this.queue.push({ exclusive, grant });
      this.drain();
    });
    try {
      return await work();
    } finally {
      if (exclusive) this.writing = false;
      else this.readers--;
      this.drain();
    }
  }

  private drain(): void {
    while (this.queue.length > 0 && !this.writing) {
      const next = this.queue[0];
      if (next.exclusive && this.readers > 0) return;
      this.queue.shift();
      if (next.exclusive) this.writing = true;
      else this.readers++;
      next.grant();
    }
  }
}
