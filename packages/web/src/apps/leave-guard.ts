// Leaving a form with unsaved changes asks first: closing or reloading the
// tab (the browser's own question), following a link inside the app, and the
// back and forward buttons. wouter has no navigation blocker, so links are
// caught before they reach it.
import { useEffect, useRef } from 'react';

export function useLeaveGuard(active: boolean, question: string): void {
  const latest = useRef(question);
  latest.current = question;

  useEffect(() => {
    if (!active) return;
    const here = window.location.href;

    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };

    // Capture phase on the document: before React's handlers (wouter's Link) see the click.
    const onClick = (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const link = (e.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
      if (!link || (link.target && link.target !== '_self') || link.hasAttribute('download')) return;
      const to = new URL(link.href, here);
      if (to.origin === window.location.origin && to.pathname === window.location.pathname && to.search === window.location.search) return;
      if (!window.confirm(latest.current)) {
        e.preventDefault();
        e.stopPropagation();
      }
    };

    // Back and forward: by the time popstate comes, wouter (listening since
    // the app started, and window listeners run in the order they were
    // added) has already shown the other page. The Navigation API's navigate
    // event comes before that and can be cancelled (Chromium, recent
    // Firefox and Safari; elsewhere a back step is not asked about).
    const navigation = (window as unknown as { navigation?: EventTarget }).navigation;
    const onNavigate = (e: Event) => {
      const nav = e as Event & { navigationType?: string };
      if (nav.navigationType === 'traverse' && nav.cancelable && !window.confirm(latest.current)) nav.preventDefault();
    };

    window.addEventListener('beforeunload', onBeforeUnload);
    document.addEventListener('click', onClick, true);
    navigation?.addEventListener('navigate', onNavigate);
    return () => {
      window.removeEventListener('beforeunload', onBeforeUnload);
      document.removeEventListener('click', onClick, true);
      navigation?.removeEventListener('navigate', onNavigate);
    };
  }, [active]);
}
