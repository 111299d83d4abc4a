// /tokens: not built yet (issue 15).
import { useLang } from '../../i18n';
import type { GatewayUser } from '../gateway-api';
import '../console.css';

export default function TokensPage({ me }: { me: GatewayUser }) {
  void me;
  const { t } = useLang();
  return (
    <section className="stack">
      <h1>{t('tokens.title')}</h1>
    </section>
  );
}
