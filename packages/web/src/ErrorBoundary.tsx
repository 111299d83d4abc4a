// One boundary per page and per widget: a failure shows its message in place,
// with a way to try again where trying again can help (not for a refused
// request: a 4xx other than 408 and 429), and the rest of the app keeps working. A page's
// boundary is given the address as `resetKey`: leaving the page clears its
// error (the next page must not inherit it). A 404 from the service (a
// knowledge base or application that does not exist) is a "not found" page,
// not a failure.
import { Component, type ReactNode } from 'react';

interface Props {
  title: string;
  retry: string;
  /** The title of a 404's page. */
  notFoundTitle?: string;
  /** Clears a shown error when it changes (the page's address). */
  resetKey?: string;
  /** Called as the error is cleared (Retry, or a new address): lets the failed queries below load again on mount. */
  onReset?: () => void;
  children: ReactNode;
}

export class ErrorBoundary extends Component<Props, { error: Error | null }> {
  state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  componentDidUpdate(prev: Props) {
    if (this.state.error && prev.resetKey !== this.props.resetKey) this.reset();
  }

  reset() {
    this.props.onReset?.();
    this.setState({ error: null });
  }

  render() {
    const { error } = this.state;
    const status = (error as { status?: number } | null)?.status;
    if (!error) return this.props.children;
    if (status === 404 && this.props.notFoundTitle)
      return (
        <div role="alert" className="notice not-found">
          <strong>
            <span>{this.props.notFoundTitle}</span>
          </strong>
          <p>
            <span>{error.message}</span>
          </p>
        </div>
      );
    return (
      <div role="alert" className="error">
        <strong>
          <span>{this.props.title}</span>
        </strong>
        <p>
          <span>{error.message}</span>
        </p>
        {retryable(status) && (
          <button type="button" onClick={() => this.reset()}>
            <span>{this.props.retry}</span>
          </button>
        )}
      </div>
    );
  }
}

/** Whether the same request may succeed later: no answer at all (network), a timeout, a rate limit, a server's failure. */
export function retryable(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500;
}
