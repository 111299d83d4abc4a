// One boundary per page and per widget: a failure shows its message in place,
// with a way to try again, and the rest of the app keeps working.
import { Component, type ReactNode } from 'react';

interface Props {
  title: string;
  retry: string;
  children: ReactNode;
}

export class ErrorBoundary extends Component<Props, { error: Error | null }> {
  state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <div role="alert" className="error">
        <strong>{this.props.title}</strong>
        <p>{this.state.error.message}</p>
        <button type="button" onClick={() => this.setState({ error: null })}>
          {this.props.retry}
        </button>
      </div>
    );
  }
}
