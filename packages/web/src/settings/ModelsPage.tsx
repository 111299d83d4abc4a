// The configured models and whether the gateway serves each, so that the
// seed's "channel for a model not found" is seen here before anyone chats.
import { useModelList } from '../models';
import { useLang } from '../i18n';
import { formatClock, Loading, Table } from '../ui';

export default function ModelsPage() {
  const { t, lang } = useLang();
  const { data } = useModelList();
  return (
    <section className="stack">
      <h1>{t('models.title')}</h1>
      <p className="muted">
        <span>{t('models.intro')}</span>
      </p>
      {!data ? (
        <Loading />
      ) : (
        <>
          {!data.gateway.reachable && (
            <p role="alert" className="notice warn">
              <span>{data.gateway.message}</span>
            </p>
          )}
          {data.models.length === 0 ? (
            <p>
              <span>{t('models.none')}</span>
            </p>
          ) : (
            <Table
              rows={data.models}
              rowKey={(m) => `${m.kind}:${m.model}`}
              columns={[
                { header: t('models.kind'), cell: (m) => <span>{t(`models.kind.${m.kind}`)}</span> },
                {
                  header: t('models.model'),
                  cell: (m) => (
                    <>
                      <div>
                        <code>{m.model}</code>
                      </div>
                      {m.name !== m.model && (
                        <div className="muted">
                          <span>{m.name}</span>
                        </div>
                      )}
                    </>
                  ),
                },
                {
                  header: t('models.status'),
                  cell: (m) => (
                    <>
                      <span className={`badge ${m.served && !m.failing ? 'ok' : 'bad'}`}>
                        {!m.served ? t('models.notServed') : m.failing ? t('models.failing') : t('models.served')}
                      </span>
                      {m.failing && (
                        <div className="error">
                          <span>
                            {t('models.failingWhy', { count: m.failing.failures, time: formatClock(m.failing.since, lang), message: m.failing.lastError })}
                          </span>
                        </div>
                      )}
                      {m.message && (
                        <div className="error">
                          <span>{m.message}</span>
                        </div>
                      )}
                    </>
                  ),
                },
              ]}
            />
          )}
        </>
      )}
    </section>
  );
}
