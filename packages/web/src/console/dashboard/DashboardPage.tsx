// /dashboard: not built yet (issue 15).
import { useLang } from '../../i18n';
import type { GatewayUser } from '../gateway-api';
import '../console.css';

export default function DashboardPage({ me }: { me: GatewayUser }) {
  void me;
  const { t } = useLang();
  return (
    <section className="stack">
      <h1>{t('dashboard.title')}</h1>
    </section>
  );
}
