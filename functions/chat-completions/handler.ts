// Placeholder: replaced by the real streaming handler (work in progress).
export const handler = async (): Promise<{ statusCode: number; body: string }> => ({ statusCode: 503, body: '{}' });
